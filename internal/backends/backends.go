// Package backends starts what tools.yaml's http and mcp bindings run on and
// hands them to the dispatcher as routes: one httptool.Tool per http binding
// and one mcp.Client per distinct MCP server (bindings naming the same
// command or URL share it), started once per process, shared by every email
// and closed together. It also checks, at start-up, that what each scenario
// declares for an MCP tool fits the server's inputSchema.
package backends

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"triage/internal/clients/httptool"
	"triage/internal/clients/mcp"
	"triage/internal/dispatcher"
	"triage/internal/scenario"
	"triage/internal/tools"
)

// EffectKey is the Idempotency-Key an HTTP tool with an effect sends: hex
// sha256 of the inbound email's key, the function and its arguments (as
// JSON, keys sorted), first 32 characters. The same email processed again
// (a crash before its reply, a retry) sends the same key for the same call.
func EffectKey(emailKey, function string, args map[string]any) string {
	b, _ := json.Marshal(args)
	sum := sha256.Sum256([]byte(emailKey + "|" + function + "|" + string(b)))
	return hex.EncodeToString(sum[:])[:32]
}

// Config configures Start; Tools is required.
type Config struct {
	Tools *tools.Set
	// MCPCallTimeout bounds one MCP tools/call on every server (default:
	// the longest mcp.timeout of the server's bindings, else
	// mcp.DefaultCallTimeout); each binding's own timeout applies within it.
	MCPCallTimeout time.Duration
	// HTTPClient is used by HTTP tools and streamable HTTP MCP servers.
	HTTPClient *http.Client
	Logger     *slog.Logger
}

// Backends are the started implementations of the non-builtin bindings.
type Backends struct {
	file    string
	routes  map[string]dispatcher.Func
	servers []*server
	byTool  map[string]mcpBinding // by function name
	log     *slog.Logger
}

type mcpBinding struct {
	srv    *server
	remote string // the server's name for the tool
}

type server struct {
	key    string
	client *mcp.Client
}

// Start builds every http tool and starts every MCP server of cfg.Tools. A
// server that cannot be reached now is not an error (Check says so; calls
// retry it); a binding that cannot be built is.
func Start(ctx context.Context, cfg Config) (*Backends, error) {
	if cfg.Tools == nil {
		return nil, errors.New("backends: Config.Tools is required")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &Backends{file: cfg.Tools.File, routes: map[string]dispatcher.Func{}, byTool: map[string]mcpBinding{}, log: log}
	var errs []error
	for _, name := range cfg.Tools.Names() {
		t := cfg.Tools.Get(name)
		switch {
		case t.HTTP != nil:
			tool, err := httptool.New(httptool.Config{
				Name:       name,
				Method:     t.HTTP.Method,
				URL:        t.HTTP.URL,
				Headers:    t.HTTP.Headers,
				Timeout:    t.HTTP.Timeout,
				HTTPClient: cfg.HTTPClient,
				Logger:     log,
			})
			if err != nil {
				errs = append(errs, fmt.Errorf("backends: %s: %s: http: %w", b.file, name, err))
				continue
			}
			effect := t.Effect
			b.routes[name] = dispatcher.Untyped(func(ctx context.Context, c *dispatcher.Call) (map[string]any, error) {
				if effect {
					return tool.CallKey(ctx, c.Args, EffectKey(string(c.Key), c.Name, c.Args))
				}
				return tool.Call(ctx, c.Args)
			})
		case t.MCP != nil:
			srv, err := b.server(ctx, t.MCP, cfg)
			if err != nil {
				errs = append(errs, fmt.Errorf("backends: %s: %s: mcp: %w", b.file, name, err))
				continue
			}
			remote := t.MCP.Tool
			if remote == "" {
				remote = name
			}
			b.byTool[name] = mcpBinding{srv: srv, remote: remote}
			timeout := t.MCP.Timeout // this binding's bound, within the server's
			b.routes[name] = dispatcher.Untyped(func(ctx context.Context, c *dispatcher.Call) (map[string]any, error) {
				if timeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, timeout)
					defer cancel()
				}
				return srv.client.Call(ctx, remote, c.Args)
			})
		}
	}
	if len(errs) > 0 {
		b.Close()
		return nil, errors.Join(errs...)
	}
	return b, nil
}

// server returns the client of spec's server, starting it on first use.
func (b *Backends) server(ctx context.Context, spec *tools.MCPSpec, cfg Config) (*server, error) {
	key := "url " + spec.URL
	for _, k := range slices.Sorted(maps.Keys(spec.Headers)) {
		key += "\x00" + k + ": " + spec.Headers[k]
	}
	var env []string
	for _, k := range slices.Sorted(maps.Keys(spec.Env)) {
		env = append(env, k+"="+spec.Env[k])
	}
	if len(spec.Command) > 0 {
		key = "command " + strings.Join(spec.Command, "\x00") + "\x00env\x00" + strings.Join(env, "\x00")
	}
	for _, s := range b.servers {
		if s.key == key {
			return s, nil
		}
	}
	c, err := mcp.New(ctx, mcp.Config{
		Command:     spec.Command,
		URL:         spec.URL,
		Headers:     spec.Headers,
		Env:         env,
		HTTPClient:  cfg.HTTPClient,
		CallTimeout: serverTimeout(cfg, spec),
		Logger:      b.log,
	})
	if err != nil {
		return nil, err
	}
	s := &server{key: key, client: c}
	b.servers = append(b.servers, s)
	return s, nil
}

// serverTimeout is the call bound of spec's server: Config.MCPCallTimeout,
// else the longest timeout among the bindings naming that server.
func serverTimeout(cfg Config, spec *tools.MCPSpec) time.Duration {
	if cfg.MCPCallTimeout > 0 {
		return cfg.MCPCallTimeout
	}
	longest := spec.Timeout
	for _, name := range cfg.Tools.Names() {
		o := cfg.Tools.Get(name).MCP
		if o != nil && slices.Equal(o.Command, spec.Command) && o.URL == spec.URL && o.Timeout > longest {
			longest = o.Timeout
		}
	}
	return longest
}

// Routes returns the dispatcher routes of the http and mcp bindings, by
// function name (dispatcher.Config.Routes).
func (b *Backends) Routes() map[string]dispatcher.Func {
	if b == nil {
		return nil
	}
	return b.routes
}

// Servers returns how many MCP servers were started.
func (b *Backends) Servers() int { return len(b.servers) }

// Check compares what each scenario declares for an MCP-bound function with
// the server's inputSchema of that tool (mcp.Compatible). With strict, a
// server that cannot be reached is an error; otherwise it is logged and
// skipped (start-up checks what it can reach; `triage check` is strict).
// Every problem names the file, the tool, the scenario and the parameter.
func (b *Backends) Check(ctx context.Context, ss *scenario.Set, strict bool) error {
	var errs []error
	unreachable := map[*server]bool{}
	schemas := map[string]map[string]any{}
	for _, sc := range ss.Scenarios {
		for i := range sc.Functions {
			fn := &sc.Functions[i]
			mb, ok := b.byTool[fn.Name]
			if !ok || unreachable[mb.srv] {
				continue
			}
			srv, remote := mb.srv, mb.remote
			schema, seen := schemas[fn.Name]
			if !seen {
				var err error
				schema, err = srv.client.InputSchema(ctx, remote)
				if err != nil {
					var me *mcp.Error
					if errors.As(err, &me) && me.Temporary() && !strict {
						unreachable[srv] = true
						b.log.WarnContext(ctx, "backends: MCP server not reachable; its tools' schemas are not checked now",
							"server", srv.client.Name(), "error", err)
						continue
					}
					errs = append(errs, fmt.Errorf("tools: %s: %s: %w", b.file, fn.Name, err))
					if me != nil && me.Temporary() {
						unreachable[srv] = true
					}
					continue
				}
				schemas[fn.Name] = schema
			}
			if err := mcp.Compatible(fn.Parameters, schema); err != nil {
				for _, e := range unjoin(err) {
					errs = append(errs, fmt.Errorf("tools: %s: %s: declared in %s, against the inputSchema of %s on MCP server %s: %v",
						b.file, fn.Name, sc.File, remote, srv.client.Name(), e))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// Close stops every MCP server, in parallel.
func (b *Backends) Close() error {
	if b == nil {
		return nil
	}
	var wg sync.WaitGroup
	errs := make([]error, len(b.servers))
	for i, s := range b.servers {
		wg.Go(func() { errs[i] = s.client.Close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return slices.Clone(j.Unwrap())
	}
	return []error{err}
}
