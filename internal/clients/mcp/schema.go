package mcp

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Compatible checks a scenario's declared parameters (a JSON Schema object)
// against a server's inputSchema: every declared parameter must exist on
// the server with a type that accepts every value the declaration allows,
// and every parameter the server requires must be declared (or the model
// could never send it). Each problem names the parameter.
func Compatible(declared, server map[string]any) error {
	dprops, _ := declared["properties"].(map[string]any)
	sprops, _ := server["properties"].(map[string]any)
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(dprops)) {
		sp, ok := sprops[name]
		if !ok {
			if ap, ok := server["additionalProperties"].(bool); ok && !ap || len(sprops) > 0 {
				errs = append(errs, fmt.Errorf("parameter %s: the server's tool has no such parameter (it has: %v)", name, slices.Sorted(maps.Keys(sprops))))
			}
			continue
		}
		dt := types(dprops[name])
		st := types(sp)
		if len(st) == 0 { // the server accepts any type
			continue
		}
		if len(dt) == 0 {
			errs = append(errs, fmt.Errorf("parameter %s: declared without a type, the server wants %v", name, st))
			continue
		}
		for _, t := range dt {
			if !accepts(st, t) {
				errs = append(errs, fmt.Errorf("parameter %s: declared type %s, the server wants %v", name, t, st))
			}
		}
	}
	for _, name := range stringList(server["required"]) {
		if _, ok := dprops[name]; !ok {
			errs = append(errs, fmt.Errorf("parameter %s: required by the server but not declared", name))
		}
	}
	return errors.Join(errs...)
}

// types lists a property schema's JSON types ("type": "x" or ["x", "y"]).
func types(prop any) []string {
	m, _ := prop.(map[string]any)
	switch t := m["type"].(type) {
	case string:
		return []string{t}
	case []any:
		return stringList(t)
	}
	return nil
}

// accepts reports whether a server taking types st accepts a value of type t
// (an integer is a number; a number is not always an integer).
func accepts(st []string, t string) bool {
	return slices.Contains(st, t) || (t == "integer" && slices.Contains(st, "number"))
}

func stringList(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	if ss, ok := v.([]string); ok {
		out = append(out, ss...)
	}
	return out
}
