package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"triage/internal/clients/mcp"
	"triage/internal/testkit/mcptest"
)

// The overhead of one tools/call on a live session: client + SDK + transport
// + the SDK server's schema validation, with a tool that does nothing.
func BenchmarkCallStdio(b *testing.B) {
	benchCall(b, stdioConfig(nil))
}

func BenchmarkCallHTTP(b *testing.B) {
	srv := testServer()
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer ts.Close()
	benchCall(b, mcp.Config{URL: ts.URL})
}

func benchCall(b *testing.B, cfg mcp.Config) {
	c, err := mcp.New(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	args := map[string]any{"text": "descale"}
	if _, err := c.Call(context.Background(), "echo", args); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.Call(context.Background(), "echo", args); err != nil {
			b.Fatal(err)
		}
	}
}

// Start-up with a stdio server: start the process, handshake, list the
// tools (the start-up inputSchema check), stop it.
func BenchmarkStartStdio(b *testing.B) {
	benchStart(b, stdioConfig(nil), "echo")
}

// The same with a server that is not ours: Node.js, the npm filesystem server.
func BenchmarkStartNPMFilesystem(b *testing.B) {
	benchStart(b, mcp.Config{Command: append(mcptest.FilesystemServer(b), b.TempDir())}, "read_text_file")
}

func benchStart(b *testing.B, cfg mcp.Config, tool string) {
	for b.Loop() {
		c, err := mcp.New(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.InputSchema(context.Background(), tool); err != nil {
			b.Fatal(err)
		}
		if err := c.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCallNPMFilesystem(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	c, err := mcp.New(context.Background(), mcp.Config{Command: append(mcptest.FilesystemServer(b), dir)})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	args := map[string]any{"path": filepath.Join(dir, "a.txt")}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Call(context.Background(), "read_text_file", args); err != nil {
			b.Fatal(err)
		}
	}
}
