package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"triage/internal/instructions"
)

// ServersConfig configures Servers; Tools is required.
type ServersConfig struct {
	// Tools are the bindings: a server's call bound is the longest
	// timeout of the bindings naming it.
	Tools *instructions.Tools
	// CallTimeout bounds one tools/call on every server (default: the
	// longest mcp.timeout of the server's bindings, else
	// instructions.DefaultMCPTimeout); each binding's own timeout applies within it.
	CallTimeout time.Duration
	// HTTPClient is used by streamable HTTP servers.
	HTTPClient *http.Client
	// Lazy starts each server on the first call of one of its tools, not
	// in Bind; before that first call the tool's inputSchema is checked
	// against what Scenarios declare for it, and a misfit fails the call
	// (and every later one) with a *MisfitError. Check, run after every
	// Bind, starts and checks every server instead.
	Lazy      bool
	Scenarios *instructions.Scenarios // required with Lazy
	Logger    *slog.Logger
}

// Servers are the MCP servers tools.yaml's mcp bindings run on: one Client
// per distinct server (bindings naming the same command or URL share it),
// started once per process, shared by every email and closed together.
// Check checks, at start-up, that what each scenario declares for an MCP
// tool fits the server's inputSchema.
type Servers struct {
	cfg     ServersConfig
	file    string
	servers []*server
	byTool  map[string]binding // by function name
	log     *slog.Logger

	mu      sync.Mutex
	checked map[string]error // Lazy: function name -> its declaration's fit (nil: fits)
}

// binding is one mcp binding: its server, the server's name for the tool
// and the binding's own call bound (0: the server's).
type binding struct {
	srv     *server
	remote  string
	timeout time.Duration
}

type server struct {
	key    string
	client *Client
}

// NewServers checks cfg; Bind starts the servers.
func NewServers(cfg ServersConfig) (*Servers, error) {
	if cfg.Tools == nil {
		return nil, errors.New("mcp: ServersConfig.Tools is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Lazy && cfg.Scenarios == nil {
		return nil, errors.New("mcp: ServersConfig.Scenarios is required with Lazy")
	}
	return &Servers{cfg: cfg, file: cfg.Tools.File, byTool: map[string]binding{}, log: cfg.Logger, checked: map[string]error{}}, nil
}

// Bind binds the function name to spec's server, starting the server (unless
// Lazy) when no binding before named it. A server that cannot be reached
// now is not an error (Check says so; calls retry it); a spec that cannot
// be built is.
func (s *Servers) Bind(ctx context.Context, name string, spec *instructions.MCPSpec) error {
	srv, err := s.server(ctx, spec)
	if err != nil {
		return err
	}
	remote := spec.Tool
	if remote == "" {
		remote = name
	}
	s.byTool[name] = binding{srv: srv, remote: remote, timeout: spec.Timeout}
	return nil
}

// Call calls the tool bound to the function name with args, within the
// binding's own timeout. With Lazy, the first call of a tool checks its
// declaration first (see ServersConfig.Lazy).
func (s *Servers) Call(ctx context.Context, name string, args map[string]any) (map[string]any, error) {
	b, ok := s.byTool[name]
	if !ok {
		return nil, fmt.Errorf("mcp: %s: no mcp binding", name)
	}
	if s.cfg.Lazy {
		if err := s.firstUse(ctx, name); err != nil {
			return nil, err
		}
	}
	if b.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.timeout)
		defer cancel()
	}
	return b.srv.client.Call(ctx, b.remote, args)
}

// server returns the client of spec's server, starting it on first use.
func (s *Servers) server(ctx context.Context, spec *instructions.MCPSpec) (*server, error) {
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
	for _, srv := range s.servers {
		if srv.key == key {
			return srv, nil
		}
	}
	c, err := New(ctx, Config{
		Command:     spec.Command,
		URL:         spec.URL,
		Headers:     spec.Headers,
		Env:         env,
		HTTPClient:  s.cfg.HTTPClient,
		CallTimeout: s.serverTimeout(spec),
		Lazy:        s.cfg.Lazy,
		Logger:      s.log,
	})
	if err != nil {
		return nil, err
	}
	srv := &server{key: key, client: c}
	s.servers = append(s.servers, srv)
	return srv, nil
}

// serverTimeout is the call bound of spec's server: CallTimeout, else the
// longest timeout among the bindings naming that server.
func (s *Servers) serverTimeout(spec *instructions.MCPSpec) time.Duration {
	if s.cfg.CallTimeout > 0 {
		return s.cfg.CallTimeout
	}
	longest := spec.Timeout
	for _, name := range s.cfg.Tools.Names() {
		o := s.cfg.Tools.Get(name).MCP
		if o != nil && slices.Equal(o.Command, spec.Command) && o.URL == spec.URL && o.Timeout > longest {
			longest = o.Timeout
		}
	}
	return longest
}

// Len returns how many MCP servers the bindings name.
func (s *Servers) Len() int { return len(s.servers) }

// Started returns how many server sessions were started so far (restarts
// included): with Lazy, none until a tool is called.
func (s *Servers) Started() int {
	n := 0
	for _, srv := range s.servers {
		n += srv.client.Starts()
	}
	return n
}

// Check compares what each scenario declares for an MCP-bound function with
// the server's inputSchema of that tool (Compatible), starting every
// server. With strict, a server that cannot be reached is an error;
// otherwise it is logged and skipped (start-up checks what it can reach;
// `triage check` is strict). Every problem names the file, the tool, the
// scenario and the parameter.
func (s *Servers) Check(ctx context.Context, ss *instructions.Scenarios, strict bool) error {
	var errs []error
	unreachable := map[*server]bool{}
	seen := map[string]bool{}
	for _, sc := range ss.Scenarios {
		for i := range sc.Functions {
			name := sc.Functions[i].Name
			b, ok := s.byTool[name]
			if !ok || unreachable[b.srv] || seen[name] {
				continue
			}
			seen[name] = true
			err := s.fits(ctx, ss, name)
			var me *Error
			if errors.As(err, &me) && me.Temporary() {
				unreachable[b.srv] = true
				if !strict {
					s.log.WarnContext(ctx, "mcp: server not reachable; its tools' schemas are not checked now",
						"server", b.srv.client.Name(), "error", err)
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
// of name with it. A server that cannot be reached is an *Error that is
// Temporary.
func (s *Servers) fits(ctx context.Context, ss *instructions.Scenarios, name string) error {
	b := s.byTool[name]
	schema, err := b.srv.client.InputSchema(ctx, b.remote)
	if err != nil {
		var me *Error
		if errors.As(err, &me) && me.Temporary() {
			return fmt.Errorf("tools: %s: %s: %w", s.file, name, me)
		}
		return fmt.Errorf("tools: %s: %s: %w", s.file, name, err)
	}
	var errs []error
	for _, sc := range ss.Scenarios {
		for i := range sc.Functions {
			fn := &sc.Functions[i]
			if fn.Name != name {
				continue
			}
			if err := Compatible(fn.Parameters, schema); err != nil {
				for _, e := range unjoin(err) {
					errs = append(errs, fmt.Errorf("tools: %s: %s: declared in %s, against the inputSchema of %s on MCP server %s: %v",
						s.file, name, sc.File, b.remote, b.srv.client.Name(), e))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// MisfitError fails every call of a lazily started tool whose declaration
// does not fit its server's inputSchema: the tool is not called.
type MisfitError struct{ msg string }

func (e *MisfitError) Error() string { return e.msg }

// firstUse checks, before a lazily started server's tool is first called,
// that the declarations of name fit its inputSchema; the answer is kept
// (an unreachable server is asked again next time: the call itself then
// fails as unavailable). A misfit fails the call with a *MisfitError
// naming the problem.
func (s *Servers) firstUse(ctx context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock() // calls of one tool wait for its first check
	if err, done := s.checked[name]; done {
		return err
	}
	err := s.fits(ctx, s.cfg.Scenarios, name)
	var me *Error
	if errors.As(err, &me) && me.Temporary() {
		return nil
	}
	if err != nil {
		s.log.ErrorContext(ctx, "mcp: a tool's declaration does not fit its server; its calls fail (run triage check)",
			"tool", name, "error", err)
		err = &MisfitError{msg: fmt.Sprintf("%v; the tool is not called until its declaration is fixed (triage check lists every problem)", err)}
	}
	s.checked[name] = err
	return err
}

// Close stops every server, in parallel.
func (s *Servers) Close() error {
	if s == nil {
		return nil
	}
	var wg sync.WaitGroup
	errs := make([]error, len(s.servers))
	for i, srv := range s.servers {
		wg.Go(func() { errs[i] = srv.client.Close() })
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
