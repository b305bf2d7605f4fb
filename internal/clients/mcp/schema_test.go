package mcp_test

import (
	"strings"
	"testing"

	"triage/internal/clients/mcp"
)

func obj(props map[string]any, required ...string) map[string]any {
	m := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		var r []any
		for _, x := range required {
			r = append(r, x)
		}
		m["required"] = r
	}
	return m
}

func typ(t any) map[string]any { return map[string]any{"type": t} }

func TestCompatible(t *testing.T) {
	server := obj(map[string]any{
		"path":  typ("string"),
		"head":  typ("number"),
		"tail":  typ("integer"),
		"any":   map[string]any{"description": "no type"},
		"multi": typ([]any{"string", "null"}),
	}, "path")
	for _, tc := range []struct {
		name     string
		declared map[string]any
		want     string // "" = compatible; else a substring of the error
	}{
		{"same", obj(map[string]any{"path": typ("string")}, "path"), ""},
		{"integer into number", obj(map[string]any{"path": typ("string"), "head": typ("integer")}), ""},
		{"untyped server param", obj(map[string]any{"path": typ("string"), "any": typ("boolean")}), ""},
		{"type list", obj(map[string]any{"path": typ("string"), "multi": typ("string")}), ""},
		{"unknown param", obj(map[string]any{"path": typ("string"), "query": typ("string")}), "parameter query: the server's tool has no such parameter"},
		{"wrong type", obj(map[string]any{"path": typ("integer")}), "parameter path: declared type integer, the server wants [string]"},
		{"number into integer", obj(map[string]any{"path": typ("string"), "tail": typ("number")}), "parameter tail: declared type number"},
		{"required not declared", obj(map[string]any{"head": typ("number")}), "parameter path: required by the server but not declared"},
		{"untyped declaration", obj(map[string]any{"path": map[string]any{}}), "parameter path: declared without a type"},
	} {
		err := mcp.Compatible(tc.declared, server)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	// A server that takes anything accepts any declaration.
	if err := mcp.Compatible(obj(map[string]any{"x": typ("string")}), map[string]any{"type": "object"}); err != nil {
		t.Errorf("open server schema: %v", err)
	}
}
