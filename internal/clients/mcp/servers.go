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
	// Lazy starts each MCP server on the first call of one of its tools,
	// not in Start; before that first call the tool's inputSchema is
	// checked against what Scenarios declare for it, and a misfit fails
	// the call (and every later one) with the problem named. Check, run
	// after Start, starts and checks every server instead.
	Lazy      bool
	Scenarios *scenario.Set // required with Lazy
	Logger    *slog.Logger
}

// Backends are the started implementations of the non-builtin bindings.
type Backends struct {
	file    string
	routes  map[string]dispatcher.Func
	servers []*server
	byTool  map[string]mcpBinding // by function name
	log     *slog.Logger

	scenarios *scenario.Set // Config.Lazy: what the first call is checked against
	mu        sync.Mutex
	checked   map[string]error // Config.Lazy: function name -> its declaration's fit (nil: fits)
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
	if cfg.Lazy && cfg.Scenarios == nil {
		return nil, errors.New("backends: Config.Scenarios is required with Lazy")
	}
	b := &Backends{file: cfg.Tools.File, routes: map[string]dispatcher.Func{}, byTool: map[string]mcpBinding{}, log: log,
		scenarios: cfg.Scenarios, checked: map[string]error{}}
	lazy := cfg.Lazy
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
				if lazy {
					if err := b.firstUse(ctx, c.Name); err != nil {
						return nil, err
					}
				}
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
		Lazy:        cfg.Lazy,
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

// Servers returns how many MCP servers the bindings name.
func (b *Backends) Servers() int { return len(b.servers) }

// Started returns how many MCP server sessions were started so far
// (restarts included): with Config.Lazy, none until a tool is called.
func (b *Backends) Started() int {
	n := 0
	for _, s := range b.servers {
		n += s.client.Starts()
	}
	return n
}

// Check compares what each scenario declares for an MCP-bound function with
// the server's inputSchema of that tool (mcp.Compatible), starting every
// server. With strict, a server that cannot be reached is an error;
// otherwise it is logged and skipped (start-up checks what it can reach;
// `triage check` is strict). Every problem names the file, the tool, the
// scenario and the parameter.
func (b *Backends) Check(ctx context.Context, ss *scenario.Set, strict bool) error {
	var errs []error
	unreachable := map[*server]bool{}
	seen := map[string]bool{}
	for _, sc := range ss.Scenarios {
		for i := range sc.Functions {
			name := sc.Functions[i].Name
			mb, ok := b.byTool[name]
			if !ok || unreachable[mb.srv] || seen[name] {
				continue
			}
			seen[name] = true
			err := b.fits(ctx, ss, name)
			var me *mcp.Error
			if errors.As(err, &me) && me.Temporary() {
				unreachable[mb.srv] = true
				if !strict {
					b.log.WarnContext(ctx, "backends: MCP server not reachable; its tools' schemas are not checked now",
						"server", mb.srv.client.Name(), "error", err)
					continue
				}
			}
			errs = append(errs, unjoin(err)...)
		}
	}
	return errors.Join(errs...)
}

// fits fetches the inputSchema of the MCP tool bound to name (starting its
// server when it is not running) and compares every scenario's declaration
// of name with it. A server that cannot be reached is an *mcp.Error that
// is Temporary.
func (b *Backends) fits(ctx context.Context, ss *scenario.Set, name string) error {
	mb := b.byTool[name]
	schema, err := mb.srv.client.InputSchema(ctx, mb.remote)
	if err != nil {
		var me *mcp.Error
		if errors.As(err, &me) && me.Temporary() {
			return fmt.Errorf("tools: %s: %s: %w", b.file, name, me)
		}
		return fmt.Errorf("tools: %s: %s: %w", b.file, name, err)
	}
	var errs []error
	for _, sc := range ss.Scenarios {
		for i := range sc.Functions {
			fn := &sc.Functions[i]
			if fn.Name != name {
				continue
			}
			if err := mcp.Compatible(fn.Parameters, schema); err != nil {
				for _, e := range unjoin(err) {
					errs = append(errs, fmt.Errorf("tools: %s: %s: declared in %s, against the inputSchema of %s on MCP server %s: %v",
						b.file, name, sc.File, mb.remote, mb.srv.client.Name(), e))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// firstUse checks, before a lazily started server's tool is first called,
// that the declarations of name fit its inputSchema; the answer is kept
// (an unreachable server is asked again next time: the call itself then
// fails as unavailable). A misfit fails the call, naming the problem.
func (b *Backends) firstUse(ctx context.Context, name string) error {
	b.mu.Lock()
	defer b.mu.Unlock() // calls of one tool wait for its first check
	if err, done := b.checked[name]; done {
		return err
	}
	err := b.fits(ctx, b.scenarios, name)
	var me *mcp.Error
	if errors.As(err, &me) && me.Temporary() {
		return nil
	}
	if err != nil {
		b.log.ErrorContext(ctx, "backends: an MCP tool's declaration does not fit its server; its calls fail (run triage check)",
			"tool", name, "error", err)
		err = &dispatcher.Error{Code: dispatcher.CodeClientError,
			Message: fmt.Sprintf("%v; the tool is not called until its declaration is fixed (triage check lists every problem)", err)}
	}
	b.checked[name] = err
	return err
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
