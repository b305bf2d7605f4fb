package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestManualsListen: `triage mcp-manuals --listen` serves search_manual over
// streamable HTTP to the MCP SDK's client, and a client that never finishes
// its request header is cut off instead of holding a connection for ever.
func TestManualsListen(t *testing.T) {
	defer func(d time.Duration) { manualsHeaderTimeout = d }(manualsHeaderTimeout)
	manualsHeaderTimeout = 300 * time.Millisecond

	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"mcp-manuals", "--listen", "127.0.0.1:0"}, strings.NewReader(""), io.Discard, pw)
		pw.Close()
	}()
	defer func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("mcp-manuals --listen exited %d after the context ended", code)
		}
	}()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		t.Fatal("mcp-manuals --listen printed nothing")
	}
	m := regexp.MustCompile(`at (http://(127\.0\.0\.1:\d+)/mcp)$`).FindStringSubmatch(lines.Text())
	if m == nil {
		t.Fatalf("first line %q does not name the address", lines.Text())
	}
	go io.Copy(io.Discard, pr) // the server's later log lines

	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: m[1]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "search_manual", Arguments: map[string]any{"query": "pairing cyclone"}})
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := res.StructuredContent.(map[string]any); res.IsError || out["found"] != true {
		t.Errorf("search_manual over HTTP: %+v", res)
	}
	cs.Close()

	conn, err := net.Dial("tcp", m[2])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"); err != nil {
		t.Fatal(err)
	}
	// The server closes the connection (a 408 at most before it); the
	// deadline only keeps a failing test from hanging.
	conn.SetReadDeadline(time.Now().Add(time.Minute))
	got, err := io.ReadAll(conn)
	if err != nil {
		t.Fatalf("the server kept a connection with an unfinished header open: %v (read %q)", err, got)
	}
	if len(got) > 0 && !strings.HasPrefix(string(got), "HTTP/1.1 408") {
		t.Errorf("an unfinished header was answered %q", got)
	}
}
