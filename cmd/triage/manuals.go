package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"triage/examples"
	"triage/internal/manuals"
	"triage/internal/settings"
)

// manualsHeaderTimeout bounds how long a client of mcp-manuals --listen may
// take to send a request's header (the body is bounded by the MCP SDK's
// request size limit). No write timeout: a session's event stream is a
// response that stays open.
var manualsHeaderTimeout = 10 * time.Second

func newManualsCmd() *cobra.Command {
	var listen, dir string
	cmd := &cobra.Command{
		Use:   "mcp-manuals [DIR]",
		Short: "Serve a directory of product manuals as an MCP server (search_manual)",
		Long: `mcp-manuals serves the Markdown manuals in DIR (default $TRIAGE_MANUALS,
else the sample manuals built into triage, examples/manuals) as an MCP
server with one tool, search_manual {query}, which returns the best matching
manual section. It speaks MCP over stdin/stdout, as tools.yaml's
"mcp: {command: [...]}" expects; with --listen it serves streamable HTTP at
http://ADDR/mcp instead.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				dir = args[0]
			}
			var lib *manuals.Library
			var err error
			if dir == "" {
				dir = "the built-in sample manuals"
				lib, err = manuals.LoadFS(examples.Manuals(), "examples/manuals (built in)")
			} else {
				lib, err = manuals.Load(dir)
			}
			if err != nil {
				return usageErr("%v", err)
			}
			srv := manuals.NewServer(lib)
			ctx := cmd.Context()
			if listen == "" {
				return srv.Run(ctx, &sdk.StdioTransport{})
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return usageErr("--listen: %v", err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "mcp-manuals: serving %s at http://%s/mcp\n", dir, ln.Addr())
			h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{
				Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
			})
			mux := http.NewServeMux()
			mux.Handle("/mcp", h)
			hs := &http.Server{Handler: mux, ReadHeaderTimeout: manualsHeaderTimeout, MaxHeaderBytes: 64 << 10, IdleTimeout: 2 * time.Minute}
			go func() {
				<-ctx.Done()
				hs.Close()
			}()
			if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	bindSettings(cmd, settings.Table{
		{Flag: "listen", Usage: "serve streamable HTTP on this address (e.g. 127.0.0.1:9000) instead of stdio", Var: settings.String(&listen, "")},
		{Env: "TRIAGE_MANUALS", Path: true, Usage: "the manuals directory when DIR is not given", Var: settings.String(&dir, "")},
	})
	return cmd
}
