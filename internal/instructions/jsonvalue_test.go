package instructions

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestJSONValue: what yaml.v3 decodes converts to what encoding/json decodes
// from the same data; a non-string key or an odd value is an error naming its
// path.
func TestJSONValue(t *testing.T) {
	var y any
	if err := yaml.Unmarshal([]byte("a: 1\nb: [2.5, x, true, null, {c: -3}]\n"), &y); err != nil {
		t.Fatal(err)
	}
	got, err := JSONValue(y)
	if err != nil {
		t.Fatal(err)
	}
	var want any
	if err := json.Unmarshal([]byte(`{"a":1,"b":[2.5,"x",true,null,{"c":-3}]}`), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("JSONValue = %#v, want %#v", got, want)
	}

	for _, tc := range []struct {
		in   any
		want string
	}{
		{map[string]any{"a": []any{1, map[any]any{2: "x"}}}, "a: [1]: key 2 is not a string"},
		{map[string]any{"when": struct{}{}}, "when: unsupported value {} (struct {})"},
	} {
		if _, err := JSONValue(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("JSONValue(%v): err = %v, want %q", tc.in, err, tc.want)
		}
	}
}
