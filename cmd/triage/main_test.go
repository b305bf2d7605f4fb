package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"triage/internal/testkit/pgtest"
)

// TestMain lets the test binary stand in for child processes:
//   - "mcp-manuals": the shipped tools.yaml starts the manuals server as
//     "${TRIAGE_BIN} mcp-manuals", and TRIAGE_BIN defaults to the running
//     binary, which in tests is this one;
//   - "mcp-crash-server": an MCP server for TestProcessMCPServerKilledMidRun.
//
// Tests that need PostgreSQL get a database of their own (pgtest.URL).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "mcp-manuals":
			os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		case "mcp-crash-server":
			if err := crashServer(os.Getenv("TRIAGE_TEST_STATE")); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			os.Exit(0)
		}
	}
	os.Exit(pgtest.Main(m))
}

// crashServer serves read_text_file over stdio. Its first call ever (across
// restarts: a marker file in state) writes the server's pid to state/pid
// and blocks until the process is killed; every other call answers with the
// pid of the process that served it.
func crashServer(state string) error {
	if state == "" {
		return errors.New("crash server: TRIAGE_TEST_STATE is not set")
	}
	type in struct {
		Path string `json:"path"`
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "crash", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "read_text_file"}, func(ctx context.Context, _ *sdk.CallToolRequest, a in) (*sdk.CallToolResult, any, error) {
		marker := filepath.Join(state, "hung")
		if f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
			f.Close()
			if err := os.WriteFile(filepath.Join(state, "pid.tmp"), []byte(fmt.Sprint(os.Getpid())), 0o644); err != nil {
				return nil, nil, err
			}
			if err := os.Rename(filepath.Join(state, "pid.tmp"), filepath.Join(state, "pid")); err != nil {
				return nil, nil, err
			}
			select {} // until killed
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("served by pid %d", os.Getpid())}}}, nil, nil
	})
	return s.Run(context.Background(), &sdk.StdioTransport{})
}
