package dispatcher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"triage/internal/clients/httpapi"
	"triage/internal/clients/mcp"
	"triage/internal/instructions"
)

// BackendsConfig configures StartBackends; Tools is required.
type BackendsConfig struct {
	Tools *instructions.Tools
	// MCPCallTimeout bounds one MCP tools/call on every server (see
	// mcp.ServersConfig.CallTimeout).
	MCPCallTimeout time.Duration
	// HTTPClient is used by HTTP tools and streamable HTTP MCP servers.
	HTTPClient *http.Client
	// Lazy starts each MCP server on the first call of one of its tools
	// (see mcp.ServersConfig.Lazy): a declaration that does not fit its
	// tool's inputSchema fails the call as a CodeClientError. Check, run
	// after StartBackends, starts and checks every server instead.
	Lazy      bool
	Scenarios *instructions.Scenarios // required with Lazy
	Logger    *slog.Logger
}

// Backends are the started implementations of tools.yaml's http and mcp
// bindings, as routes (Config.Routes): an httpapi.Tool per http binding,
// and the MCP servers the mcp bindings name (mcp.Servers).
type Backends struct {
	routes map[string]Func
	mcp    *mcp.Servers
}

// StartBackends builds every http tool and starts every MCP server of
// cfg.Tools. A server that cannot be reached now is not an error (Check
// says so; calls retry it); a binding that cannot be built is.
func StartBackends(ctx context.Context, cfg BackendsConfig) (*Backends, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	servers, err := mcp.NewServers(mcp.ServersConfig{Tools: cfg.Tools, CallTimeout: cfg.MCPCallTimeout, HTTPClient: cfg.HTTPClient,
		Lazy: cfg.Lazy, Scenarios: cfg.Scenarios, Logger: log})
	if err != nil {
		return nil, err
	}
	b := &Backends{routes: map[string]Func{}, mcp: servers}
	file := cfg.Tools.File
	var errs []error
	for _, name := range cfg.Tools.Names() {
		t := cfg.Tools.Get(name)
		switch {
		case t.HTTP != nil:
			tool, err := httpapi.NewTool(httpapi.ToolConfig{
				Name:       name,
				Method:     t.HTTP.Method,
				URL:        t.HTTP.URL,
				Headers:    t.HTTP.Headers,
				Timeout:    t.HTTP.Timeout,
				HTTPClient: cfg.HTTPClient,
				Logger:     log,
			})
			if err != nil {
				errs = append(errs, fmt.Errorf("backends: %s: %s: http: %w", file, name, err))
				continue
			}
			effect := t.Effect
			b.routes[name] = Untyped(func(ctx context.Context, c *Call) (map[string]any, error) {
				if effect {
					return tool.CallKey(ctx, c.Args, httpapi.EffectKey(string(c.Key), c.Name, c.Args))
				}
				return tool.Call(ctx, c.Args)
			})
		case t.MCP != nil:
			if err := servers.Bind(ctx, name, t.MCP); err != nil {
				errs = append(errs, fmt.Errorf("backends: %s: %s: mcp: %w", file, name, err))
				continue
			}
			b.routes[name] = Untyped(func(ctx context.Context, c *Call) (map[string]any, error) {
				res, err := servers.Call(ctx, name, c.Args)
				if mf := (*mcp.MisfitError)(nil); errors.As(err, &mf) {
					return nil, &Error{Code: CodeClientError, Message: mf.Error()}
				}
				return res, err
			})
		}
	}
	if len(errs) > 0 {
		b.Close()
		return nil, errors.Join(errs...)
	}
	return b, nil
}

// Routes returns the routes of the http and mcp bindings, by function name
// (Config.Routes).
func (b *Backends) Routes() map[string]Func {
	if b == nil {
		return nil
	}
	return b.routes
}

// Servers returns how many MCP servers the bindings name.
func (b *Backends) Servers() int { return b.mcp.Len() }

// Started returns how many MCP server sessions were started so far
// (restarts included): with BackendsConfig.Lazy, none until a tool is
// called.
func (b *Backends) Started() int { return b.mcp.Started() }

// Check compares what each scenario declares for an MCP-bound function with
// the server's inputSchema of that tool, starting every server (see
// mcp.Servers.Check).
func (b *Backends) Check(ctx context.Context, ss *instructions.Scenarios, strict bool) error {
	return b.mcp.Check(ctx, ss, strict)
}

// Close stops every MCP server, in parallel.
func (b *Backends) Close() error {
	if b == nil {
		return nil
	}
	return b.mcp.Close()
}
