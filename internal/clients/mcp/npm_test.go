package mcp_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"triage/internal/clients/mcp"
	"triage/internal/testkit/mcptest"
)

// An MCP server that is not ours (Node.js, the TypeScript SDK): the npm
// filesystem server over stdio.
func TestNPMFilesystemServer(t *testing.T) {
	cmd := mcptest.FilesystemServer(t)
	kb := t.TempDir()
	if err := os.WriteFile(filepath.Join(kb, "returns.txt"), []byte("Returns are accepted within 30 days.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, mcp.Config{Command: append(cmd, kb)})

	schema, err := c.InputSchema(context.Background(), "read_text_file")
	if err != nil {
		t.Fatal(err)
	}
	declared := obj(map[string]any{"path": typ("string")}, "path")
	if err := mcp.Compatible(declared, schema); err != nil {
		t.Errorf("a declaration of path:string: %v", err)
	}
	bad := obj(map[string]any{"path": typ("string"), "file": typ("string")}, "path")
	if err := mcp.Compatible(bad, schema); err == nil || !strings.Contains(err.Error(), "parameter file") {
		t.Errorf("a declaration with a parameter the server lacks: %v", err)
	}

	got, err := c.Call(context.Background(), "read_text_file", map[string]any{"path": filepath.Join(kb, "returns.txt")})
	if err != nil {
		t.Fatal(err)
	}
	if txt, _ := got["text"].(string); !strings.Contains(txt, "within 30 days") {
		t.Errorf("result %v", got)
	}
	// Outside the allowed directory: the server's error reaches us as a
	// permanent call error with its message.
	_, err = c.Call(context.Background(), "read_text_file", map[string]any{"path": "/etc/passwd"})
	var me *mcp.Error
	if !errors.As(err, &me) || me.Temporary() || !strings.Contains(strings.ToLower(err.Error()), "access denied") {
		t.Errorf("outside the allowed directory: %v", err)
	}
}
