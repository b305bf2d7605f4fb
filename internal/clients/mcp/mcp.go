// Package mcp runs tools of an MCP server for tools.yaml bindings, through
// the official Go SDK (github.com/modelcontextprotocol/go-sdk). One Client
// holds one session with one server (a command over stdio, or a streamable
// HTTP endpoint), shared by every email. Each call has a timeout; the
// server's own errors (isError results, JSON-RPC errors) come back as
// errors carrying its message; a server that dies is started again on the
// next call, and the calls in flight when it died fail at once. Servers
// are the clients of a tools set's mcp bindings, one per distinct server,
// and check what the scenarios declare for each tool against the server's
// inputSchema.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"triage/internal/clients/httpapi"
	"triage/internal/instructions"
)

// Defaults.
const (
	DefaultConnectTimeout = 20 * time.Second
	DefaultMaxStderrBytes = 64 << 10
	terminateGrace        = 2 * time.Second // stdin closed -> SIGTERM -> SIGKILL
	probeTimeout          = 5 * time.Second
)

// Config configures a Client: exactly one of Command and URL.
type Config struct {
	Name           string            // label in logs and errors; default: the command's base name or the URL's host
	Command        []string          // stdio: program and arguments
	Env            []string          // stdio: KEY=VALUE added to the server's environment (see childEnv)
	URL            string            // streamable HTTP endpoint
	Headers        map[string]string // streamable HTTP: sent with every request (may hold secrets)
	HTTPClient     *http.Client      // streamable HTTP; default: a new client; its redirect policy is replaced
	CallTimeout    time.Duration     // one tools/call; default tools.yaml's (instructions.DefaultMCPTimeout)
	ConnectTimeout time.Duration     // start + handshake; default DefaultConnectTimeout
	MaxStderrBytes int               // stdio: server stderr logged per start, then dropped; default 64 KiB
	// Lazy: New does not start the server; the first call (or
	// InputSchema) does.
	Lazy   bool
	Logger *slog.Logger
}

// Client is one server's session, (re)started on demand. It is safe for
// concurrent use.
type Client struct {
	cfg     Config
	name    string
	sdk     *sdk.Client
	log     *slog.Logger
	secrets []string // header values, URL credentials and Env values, redacted from errors and logs

	mu     sync.Mutex
	sess   *sdk.ClientSession
	tools  map[string]*sdk.Tool // tools/list of sess, loaded on first need
	dial   *dialing             // connection attempt under way
	closed bool
	starts int
	bg     sync.WaitGroup // sessions being closed in the background
}

type dialing struct {
	done chan struct{}
	sess *sdk.ClientSession
	err  error
}

// Error is a failed call; Temporary says whether a retry (later) may help.
type Error struct {
	msg       string
	temporary bool
	err       error
}

func (e *Error) Error() string   { return "mcp: " + e.msg }
func (e *Error) Unwrap() error   { return e.err }
func (e *Error) Temporary() bool { return e.temporary }

// codeRejectedByTransport is the JSON-RPC code the SDK's streamable HTTP
// client gives a request the transport could not deliver or complete.
const codeRejectedByTransport = -32005

// ErrClosed is returned by calls after Close.
var ErrClosed = errors.New("mcp: client closed")

// New checks cfg and starts the server (or connects to it), unless
// cfg.Lazy. A server that cannot be reached now is not an error: it is
// logged and tried again on the next call; InputSchema reports it.
func New(ctx context.Context, cfg Config) (*Client, error) {
	switch {
	case len(cfg.Command) > 0 && cfg.URL != "":
		return nil, errors.New("mcp: both command and url are set; want one")
	case len(cfg.Command) > 0:
		if cfg.Command[0] == "" {
			return nil, errors.New("mcp: command: empty program name")
		}
		if cfg.Name == "" {
			cfg.Name = filepath.Base(cfg.Command[0])
		}
	case cfg.URL != "":
		u, err := url.Parse(cfg.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("mcp: url %q: want an absolute http(s) URL", cfg.URL)
		}
		if cfg.Name == "" {
			cfg.Name = u.Host
		}
		cfg.HTTPClient = httpClient(cfg.HTTPClient, u, cfg.Headers)
	default:
		return nil, errors.New("mcp: want a command or a url")
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = instructions.DefaultMCPTimeout
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if cfg.MaxStderrBytes <= 0 {
		cfg.MaxStderrBytes = DefaultMaxStderrBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Client{
		cfg:     cfg,
		name:    cfg.Name,
		log:     cfg.Logger.With("mcp_server", cfg.Name),
		sdk:     sdk.NewClient(&sdk.Implementation{Name: "triage", Version: "1"}, nil),
		secrets: secretsOf(cfg.URL, cfg.Headers, cfg.Env),
	}
	if cfg.Lazy {
		return c, nil
	}
	if _, err := c.session(ctx); err != nil {
		c.log.WarnContext(ctx, "mcp: server not reachable at start; will retry on the first call", "error", c.redact(err.Error()))
	}
	return c, nil
}

// Name is the server's label.
func (c *Client) Name() string { return c.name }

// Starts reports how many sessions were started so far (restarts included).
func (c *Client) Starts() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.starts
}

// session returns the live session, starting one when there is none. A
// caller whose ctx ends stops waiting; the attempt itself is bounded by
// ConnectTimeout and shared by every caller waiting for it.
func (c *Client) session(ctx context.Context) (*sdk.ClientSession, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	if c.sess != nil {
		s := c.sess
		c.mu.Unlock()
		return s, nil
	}
	d := c.dial
	if d == nil {
		d = &dialing{done: make(chan struct{})}
		c.dial = d
		go c.connect(d)
	}
	c.mu.Unlock()
	select {
	case <-d.done:
		return d.sess, d.err
	case <-ctx.Done():
		return nil, &Error{msg: fmt.Sprintf("server %s: still starting: %v", c.name, ctx.Err()), temporary: true, err: ctx.Err()}
	}
}

// connect runs one connection attempt and publishes its result.
func (c *Client) connect(d *dialing) {
	defer close(d.done)
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.ConnectTimeout)
	defer cancel()
	start := time.Now()
	var t sdk.Transport
	var stderr *stderrLog
	if len(c.cfg.Command) > 0 {
		cmd := exec.Command(c.cfg.Command[0], c.cfg.Command[1:]...)
		cmd.Env = childEnv(os.Environ(), c.cfg.Env)
		stderr = newStderrLog(c.log, c.cfg.MaxStderrBytes, c.redact)
		cmd.Stderr = stderr
		cmd.WaitDelay = terminateGrace // a grandchild holding stderr open cannot block Wait
		t = &sdk.CommandTransport{Command: cmd, TerminateDuration: terminateGrace}
	} else {
		t = &sdk.StreamableClientTransport{Endpoint: c.cfg.URL, HTTPClient: c.cfg.HTTPClient, DisableStandaloneSSE: true}
	}
	sess, err := c.sdk.Connect(ctx, t, nil)

	c.mu.Lock()
	defer c.mu.Unlock()
	c.dial = nil
	if err != nil {
		msg := fmt.Sprintf("server %s: start: %v", c.name, err)
		if stderr != nil && stderr.Last() != "" {
			msg += fmt.Sprintf(" (its stderr: %q)", stderr.Last())
		}
		msg = c.redact(msg)
		d.err = &Error{msg: msg, temporary: true, err: err}
		c.log.Warn("mcp: server start failed", "error", msg, "duration_ms", time.Since(start).Milliseconds())
		return
	}
	if c.closed {
		c.closeInBackground(sess)
		d.err = ErrClosed
		return
	}
	c.starts++
	c.sess, c.tools, d.sess = sess, nil, sess
	c.log.Info("mcp: server session started", "start", c.starts, "duration_ms", time.Since(start).Milliseconds())
	c.bg.Add(1)
	go func() { // the server went away (process exited, stream closed)
		defer c.bg.Done()
		err := sess.Wait()
		c.drop(sess, "session ended", err)
	}()
}

// drop forgets sess (if it is still the live one) and closes it, so the
// next call starts a new session.
func (c *Client) drop(sess *sdk.ClientSession, why string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess != sess {
		return
	}
	c.sess, c.tools = nil, nil
	if !c.closed {
		c.log.Warn("mcp: server session lost; the next call restarts it", "why", why, "error", c.redact(fmt.Sprint(err)))
	}
	c.closeInBackground(sess)
}

// closeInBackground closes sess without blocking the caller (a stdio
// server gets terminateGrace to exit after stdin closes). Call with c.mu held.
func (c *Client) closeInBackground(sess *sdk.ClientSession) {
	c.bg.Add(1)
	go func() {
		defer c.bg.Done()
		_ = sess.Close()
	}()
}

// Call runs tool with args. The result is {"text": the text content,
// "structured": the structured content, "content": other content described}
// (each only when present). An isError result, a JSON-RPC error, a timeout
// or a lost server is an *Error; only the last two are Temporary.
func (c *Client) Call(ctx context.Context, tool string, args map[string]any) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.CallTimeout)
	defer cancel()
	sess, err := c.session(ctx)
	if err != nil {
		return nil, err
	}
	if args == nil {
		args = map[string]any{}
	}
	res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, c.callError(ctx, sess, tool, err)
	}
	// A server may quote the token it was given (mcp.env) in an error or
	// an answer: neither reaches the model, the outcome or a reply with it.
	out := httpapi.Secrets(c.secrets).Value(toolResult(res)).(map[string]any)
	if res.IsError {
		msg, _ := out["text"].(string)
		if msg == "" {
			msg = "the tool reported an error"
		}
		return nil, &Error{msg: fmt.Sprintf("server %s: tool %s: %s", c.name, tool, msg)}
	}
	return out, nil
}

// callError classifies a failed tools/call and drops a broken session.
func (c *Client) callError(ctx context.Context, sess *sdk.ClientSession, tool string, err error) error {
	var we *jsonrpc.Error
	switch {
	case errors.As(err, &we) && we.Code == codeRejectedByTransport:
		// The SDK's own code for a request that never got an answer over
		// HTTP (refused, stream dropped, session forgotten): a lost session.
	case errors.As(err, &we):
		return &Error{msg: c.redact(fmt.Sprintf("server %s: tool %s: %s (code %d)", c.name, tool, we.Message, we.Code)), err: err}
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		// The session may be fine (a slow tool) or wedged: ask it.
		c.mu.Lock()
		if !c.closed && c.sess == sess {
			c.bg.Add(1) // under c.mu and before Close: Close's Wait sees it
			go func() {
				defer c.bg.Done()
				c.probe(sess)
			}()
		}
		c.mu.Unlock()
		return &Error{msg: fmt.Sprintf("server %s: tool %s: no answer in time", c.name, tool), temporary: true, err: err}
	case ctx.Err() != nil:
		return &Error{msg: fmt.Sprintf("server %s: tool %s: %v", c.name, tool, ctx.Err()), err: err}
	}
	c.drop(sess, "call failed", err)
	return &Error{msg: c.redact(fmt.Sprintf("server %s: tool %s: connection lost: %v", c.name, tool, err)), temporary: true, err: err}
}

// probe pings sess and drops it when it does not answer.
func (c *Client) probe(sess *sdk.ClientSession) {
	ctx, cancel := context.WithTimeout(context.Background(), min(probeTimeout, c.cfg.CallTimeout))
	defer cancel()
	if err := sess.Ping(ctx, nil); err != nil {
		c.drop(sess, "no answer to ping after a call timed out", err)
	}
}

// InputSchema returns the server's inputSchema of tool (as decoded JSON).
// An unreachable server is a Temporary *Error; a tool the server does not
// have is a permanent one listing the tools it has.
func (c *Client) InputSchema(ctx context.Context, tool string) (map[string]any, error) {
	t, err := c.lookup(ctx, tool)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(t.InputSchema)
	if err != nil {
		return nil, &Error{msg: fmt.Sprintf("server %s: tool %s: inputSchema: %v", c.name, tool, err)}
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil, &Error{msg: fmt.Sprintf("server %s: tool %s: inputSchema is not a JSON object", c.name, tool)}
	}
	return m, nil
}

func (c *Client) lookup(ctx context.Context, tool string) (*sdk.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.CallTimeout)
	defer cancel()
	sess, err := c.session(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	tools := c.tools
	if c.sess != sess { // the cached list is another session's
		tools = nil
	}
	c.mu.Unlock()
	if tools == nil {
		tools = map[string]*sdk.Tool{}
		for t, err := range sess.Tools(ctx, nil) {
			if err != nil {
				return nil, c.callError(ctx, sess, "tools/list", err)
			}
			tools[t.Name] = t
		}
		c.mu.Lock()
		if c.sess == sess {
			c.tools = tools
		}
		c.mu.Unlock()
	}
	t := tools[tool]
	if t == nil {
		return nil, &Error{msg: fmt.Sprintf("server %s has no tool %q (it has: %s)", c.name, tool, strings.Join(slices.Sorted(maps.Keys(tools)), ", "))}
	}
	return t, nil
}

// Close ends the session (a stdio server gets its stdin closed, then
// SIGTERM, then SIGKILL) and waits for it.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	sess := c.sess
	c.sess = nil
	d := c.dial
	c.mu.Unlock()
	if d != nil {
		<-d.done // connect sees closed and closes what it opened
	}
	var err error
	if sess != nil {
		err = sess.Close()
	}
	c.bg.Wait()
	if err == nil || errors.Is(err, sdk.ErrConnectionClosed) {
		return nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) { // a server killed by our SIGTERM is fine
		return nil
	}
	if c.cfg.URL != "" { // ending an HTTP session the server already forgot (or is gone)
		c.log.Debug("mcp: closing the session failed", "error", c.redact(err.Error()))
		return nil
	}
	return fmt.Errorf("mcp: server %s: close: %s", c.name, c.redact(err.Error()))
}

// ChildEnvAllowed lists the variables of our environment a stdio server
// inherits (besides LC_*): what a program needs to run (PATH, HOME, the
// user, locale, time zone, temporary directory, terminal) and
// TRIAGE_MANUALS for triage's own manuals server. Nothing else passes
// (no model keys, mail or database passwords, DATABASE_URL, service
// tokens, whatever their names); a binding passes what its server needs
// in env:.
var ChildEnvAllowed = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM", "TRIAGE_MANUALS"}

// childEnv is a stdio server's environment: the variables of ours that
// ChildEnvAllowed (or the LC_ prefix) names, plus extra.
func childEnv(ours, extra []string) []string {
	out := make([]string, 0, len(ChildEnvAllowed)+len(extra))
	for _, kv := range ours {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "LC_") || slices.Contains(ChildEnvAllowed, name) {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}

// httpClient is base (or a new client) sending headers with every request
// and following redirects only within u's scheme and host, so headers never
// reach another host.
func httpClient(base *http.Client, u *url.URL, headers map[string]string) *http.Client {
	c := &http.Client{}
	if base != nil {
		*c = *base
	}
	origin := u.Scheme + "://" + u.Host
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("more than 5 redirects")
		}
		if req.URL.Scheme+"://"+req.URL.Host != origin {
			return errors.New("redirect to another host (" + req.URL.Host + ") refused")
		}
		return nil
	}
	if len(headers) > 0 {
		h := http.Header{}
		for k, v := range headers {
			h.Set(k, v)
		}
		rt := c.Transport
		if rt == nil {
			rt = http.DefaultTransport
		}
		c.Transport = headerTransport{base: rt, h: h}
	}
	return c
}

type headerTransport struct {
	base http.RoundTripper
	h    http.Header
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = v
	}
	return t.base.RoundTrip(r)
}

// secretsOf lists what must never appear in an error or a log line: header
// values (and a "Bearer x" token alone), URL passwords and query values, and
// the values a binding passes a stdio server in its environment (a server
// that fails may well print the token it was given).
func secretsOf(raw string, headers map[string]string, env []string) []string {
	var out []string
	for _, kv := range env {
		if _, v, ok := strings.Cut(kv, "="); ok && len(v) >= 4 {
			out = append(out, v)
		}
	}
	for _, v := range headers {
		if len(v) >= 4 {
			out = append(out, v)
		}
		if _, tok, ok := strings.Cut(v, " "); ok && len(tok) >= 4 {
			out = append(out, tok)
		}
	}
	if u, err := url.Parse(raw); err == nil && raw != "" {
		if p, ok := u.User.Password(); ok && p != "" {
			out = append(out, p)
		}
		for _, vs := range u.Query() {
			for _, v := range vs {
				if len(v) >= 4 {
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// redact replaces every secret in s.
func (c *Client) redact(s string) string {
	return httpapi.Secrets(c.secrets).String(s)
}

// toolResult turns a tools/call result into what the model sees: "text" (the
// text content and text resources, joined by newlines), "structured" (the
// structured content) and "content" (other content, described without its
// data).
func toolResult(res *sdk.CallToolResult) map[string]any {
	out := map[string]any{}
	var texts []string
	var other []any
	for _, ct := range res.Content {
		switch ct := ct.(type) {
		case *sdk.TextContent:
			texts = append(texts, ct.Text)
		case *sdk.EmbeddedResource:
			if ct.Resource != nil && ct.Resource.Text != "" {
				texts = append(texts, ct.Resource.Text)
			} else if ct.Resource != nil {
				other = append(other, map[string]any{"type": "resource", "uri": ct.Resource.URI, "mimeType": ct.Resource.MIMEType})
			}
		case *sdk.ResourceLink:
			other = append(other, map[string]any{"type": "resource_link", "uri": ct.URI, "name": ct.Name})
		case *sdk.ImageContent:
			other = append(other, map[string]any{"type": "image", "mimeType": ct.MIMEType})
		case *sdk.AudioContent:
			other = append(other, map[string]any{"type": "audio", "mimeType": ct.MIMEType})
		}
	}
	if len(texts) > 0 {
		out["text"] = strings.Join(texts, "\n")
	}
	if res.StructuredContent != nil {
		out["structured"] = res.StructuredContent
	}
	if len(other) > 0 {
		out["content"] = other
	}
	return out
}
