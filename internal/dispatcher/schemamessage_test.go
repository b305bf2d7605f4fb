package dispatcher

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// displayed is the validator's own display text flattened to one line: its
// first line (the schema's URL) dropped, every other line one failure. The
// message the model sees says the same, read from the structured error.
func displayed(err error) string {
	var parts []string
	for i, line := range strings.Split(err.Error(), "\n") {
		line = strings.TrimSpace(line)
		if i == 0 && strings.HasPrefix(line, "jsonschema validation failed") {
			continue
		}
		if line = strings.TrimSpace(strings.TrimPrefix(line, "- ")); line != "" {
			parts = append(parts, line)
		}
	}
	return "arguments do not match the schema: " + strings.Join(parts, "; ")
}

func TestSchemaMessage(t *testing.T) {
	const schema = `{
		"type": "object",
		"additionalProperties": false,
		"required": ["serial_number", "priority"],
		"properties": {
			"serial_number": {"type": "string", "maxLength": 12, "pattern": "^[A-Z]"},
			"priority": {"enum": ["low", "normal", "high"]},
			"items": {"type": "array", "items": {"$ref": "#/$defs/item"}},
			"contact": {"anyOf": [{"type": "string", "format": "email"}, {"type": "object", "required": ["phone"]}]},
			"a/b~c'd\"e\\": {"type": "integer"}
		},
		"$defs": {"item": {"type": "object", "required": ["sku"], "properties": {"sku": {"type": "string", "minLength": 3}}}}
	}`
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("mem://args.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("mem://args.json")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, args string
		want       []string // what the message must say, besides equalling displayed
	}{
		{"missing and extra", `{"x": 1}`, []string{"missing properties 'serial_number', 'priority'", "additional properties 'x' not allowed"}},
		{"type and enum", `{"serial_number": 7, "priority": "urgent"}`, []string{"at '/serial_number'", "at '/priority'"}},
		{"length and pattern", `{"serial_number": "sn-1234567890123", "priority": "low"}`, []string{"maxLength", "does not match pattern"}},
		{"through a $ref", `{"serial_number": "SN1", "priority": "low", "items": [{"sku": "ab"}, {}]}`, []string{"at '/items/0/sku'", "at '/items/1'"}},
		{"anyOf", `{"serial_number": "SN1", "priority": "low", "contact": "nobody"}`, []string{"at '/contact': 'anyOf' failed", "is not valid email"}},
		{"an escaped location", `{"serial_number": "SN1", "priority": "low", "a/b~c'd\"e\\": "x"}`, []string{`at '/a~1b~0c\'d"e`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var args map[string]any
			if err := json.Unmarshal([]byte(tt.args), &args); err != nil {
				t.Fatal(err)
			}
			verr := sch.Validate(args)
			if verr == nil {
				t.Fatal("valid")
			}
			got := schemaMessage(verr)
			if want := displayed(verr); got != want {
				t.Errorf("message\n%s\nwant (the validator's display)\n%s", got, want)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("message lacks %q:\n%s", w, got)
				}
			}
			if strings.Contains(got, "mem://") || strings.Contains(got, "\n") {
				t.Errorf("message names the schema or spans lines:\n%s", got)
			}
		})
	}
}
