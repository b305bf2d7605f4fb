package instructions

import "fmt"

// JSONValue converts a value yaml.v3 decoded into an `any` (a schema, an
// expected result) to the values encoding/json decodes the same data to: maps
// with string keys, slices, strings, bools, nil and float64 numbers, so it
// compares equal to decoded JSON. A map with a key that is not a string, or a
// value of another kind, is an error naming its path ("a: [1]: ...").
func JSONValue(v any) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			c, err := JSONValue(x)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = c
		}
		return out, nil
	case map[any]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			ks, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("key %v is not a string", k)
			}
			c, err := JSONValue(x)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", ks, err)
			}
			out[ks] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			c, err := JSONValue(x)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = c
		}
		return out, nil
	case int:
		return float64(v), nil
	case int64:
		return float64(v), nil
	case uint64:
		return float64(v), nil
	case nil, string, bool, float64:
		return v, nil
	}
	return nil, fmt.Errorf("unsupported value %v (%T)", v, v)
}
