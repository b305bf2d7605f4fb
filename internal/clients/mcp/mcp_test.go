package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"triage/internal/clients/mcp"
)

// serverEnv makes the test binary an MCP stdio server (see TestMain).
const serverEnv = "TRIAGE_MCP_TEST_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "failsecret" {
		fmt.Fprintln(os.Stderr, "kb: token "+os.Getenv("KB_TOKEN")+" rejected")
		fmt.Fprintln(os.Stderr, "kb: giving up with token "+os.Getenv("KB_TOKEN"))
		os.Exit(2)
	}
	if os.Getenv(serverEnv) == "fail" {
		fmt.Fprintln(os.Stderr, "manuals: open /srv/kb: no such file or directory")
		os.Exit(2)
	}
	if os.Getenv(serverEnv) == "1" {
		// Noise on stderr, which the client must log, bounded.
		for i := range 3 {
			fmt.Fprintf(os.Stderr, "test server starting, line %d\n", i)
		}
		if err := testServer().Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type echoIn struct {
	Text string `json:"text" jsonschema:"what to echo"`
}

type echoOut struct {
	Echo string `json:"echo"`
	Len  int    `json:"len"`
}

type slowIn struct {
	Seconds float64 `json:"seconds"`
}

// testServer is an MCP server built on the SDK with tools for each path of
// the client: text+structured, isError, a protocol error, slow, pid.
func testServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "echo text"},
		func(ctx context.Context, req *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, echoOut, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "you said: " + in.Text}}},
				echoOut{Echo: in.Text, Len: len(in.Text)}, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "fail"},
		func(ctx context.Context, req *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return nil, nil, errors.New("no manual for " + in.Text)
		})
	s.AddTool(&sdk.Tool{Name: "protocol_error", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: -32001, Message: "quota exhausted"}
		})
	sdk.AddTool(s, &sdk.Tool{Name: "slow"},
		func(ctx context.Context, req *sdk.CallToolRequest, in slowIn) (*sdk.CallToolResult, any, error) {
			select {
			case <-ctx.Done():
			case <-time.After(time.Duration(in.Seconds * float64(time.Second))):
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "failenv"},
		func(ctx context.Context, req *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return nil, nil, errors.New("token " + os.Getenv(in.Text) + " rejected")
		})
	sdk.AddTool(s, &sdk.Tool{Name: "getenv"},
		func(ctx context.Context, req *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Text + "=" + os.Getenv(in.Text)}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "pid"},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, struct {
			PID int `json:"pid"`
		}, error) {
			return nil, struct {
				PID int `json:"pid"`
			}{os.Getpid()}, nil
		})
	return s
}

// stdioConfig runs this test binary as the server.
func stdioConfig(log *slog.Logger) mcp.Config {
	return mcp.Config{Command: []string{os.Args[0]}, Env: []string{serverEnv + "=1"}, Name: "testsrv", Logger: log}
}

// swappable lets a test replace the HTTP server's handler (a restarted
// server forgets its sessions).
type swappable struct {
	mu sync.Mutex
	h  http.Handler
}

func (s *swappable) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	h := s.h
	s.mu.Unlock()
	h.ServeHTTP(w, r)
}

func (s *swappable) restart() {
	s.mu.Lock()
	defer s.mu.Unlock()
	srv := testServer()
	s.h = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
}

func startHTTP(t *testing.T) (*swappable, string) {
	t.Helper()
	h := &swappable{}
	h.restart()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return h, ts.URL + "/mcp"
}

func newClient(t *testing.T, cfg mcp.Config) *mcp.Client {
	t.Helper()
	c, err := mcp.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

// transports runs fn over stdio and over streamable HTTP.
func transports(t *testing.T, fn func(t *testing.T, c *mcp.Client)) {
	t.Run("stdio", func(t *testing.T) {
		fn(t, newClient(t, stdioConfig(nil)))
	})
	t.Run("http", func(t *testing.T) {
		_, u := startHTTP(t)
		fn(t, newClient(t, mcp.Config{URL: u}))
	})
}

func TestCallTextAndStructured(t *testing.T) {
	transports(t, func(t *testing.T, c *mcp.Client) {
		got, err := c.Call(context.Background(), "echo", map[string]any{"text": "descale"})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"text": "you said: descale", "structured": map[string]any{"echo": "descale", "len": 7.0}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("result (-want +got):\n%s", diff)
		}
	})
}

func TestServerErrorsAreCallErrors(t *testing.T) {
	transports(t, func(t *testing.T, c *mcp.Client) {
		for _, tc := range []struct {
			tool string
			args map[string]any
			want string
		}{
			{"fail", map[string]any{"text": "X9"}, "tool fail: no manual for X9"},
			{"protocol_error", nil, "quota exhausted (code -32001)"},
			{"no_such_tool", nil, "no_such_tool"},
			{"echo", map[string]any{"text": 5}, "tool echo"}, // the server's own schema check
		} {
			_, err := c.Call(context.Background(), tc.tool, tc.args)
			var me *mcp.Error
			if !errors.As(err, &me) || me.Temporary() || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: err = %v, want a permanent *mcp.Error containing %q", tc.tool, err, tc.want)
			}
		}
		// The session survived the errors.
		if _, err := c.Call(context.Background(), "echo", map[string]any{"text": "ok"}); err != nil {
			t.Errorf("after the errors: %v", err)
		}
		if n := c.Starts(); n != 1 {
			t.Errorf("Starts = %d, want 1 (one session shared by every call)", n)
		}
	})
}

func TestCallTimeout(t *testing.T) {
	transports(t, func(t *testing.T, c *mcp.Client) {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := c.Call(ctx, "slow", map[string]any{"seconds": 30})
		var me *mcp.Error
		if !errors.As(err, &me) || !me.Temporary() || !strings.Contains(err.Error(), "no answer in time") {
			t.Fatalf("err = %v, want a temporary timeout", err)
		}
		// A slow tool does not take the session down.
		if _, err := c.Call(context.Background(), "echo", map[string]any{"text": "still here"}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestConfigCallTimeout(t *testing.T) {
	cfg := stdioConfig(nil)
	cfg.CallTimeout = 100 * time.Millisecond
	c := newClient(t, cfg)
	_, err := c.Call(context.Background(), "slow", map[string]any{"seconds": 30})
	if err == nil || !strings.Contains(err.Error(), "no answer in time") {
		t.Fatalf("err = %v, want Config.CallTimeout to end the call", err)
	}
}

func TestConcurrentCallsShareOneSession(t *testing.T) {
	transports(t, func(t *testing.T, c *mcp.Client) {
		var wg sync.WaitGroup
		var failed atomic.Int32
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				txt := fmt.Sprint("msg", i)
				got, err := c.Call(context.Background(), "echo", map[string]any{"text": txt})
				if err != nil || got["text"] != "you said: "+txt {
					failed.Add(1)
					t.Errorf("call %d: %v %v", i, got, err)
				}
			}()
		}
		wg.Wait()
		if c.Starts() != 1 {
			t.Errorf("Starts = %d, want 1", c.Starts())
		}
	})
}

func pid(t *testing.T, c *mcp.Client) int {
	t.Helper()
	got, err := c.Call(context.Background(), "pid", nil)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := got["structured"].(map[string]any)
	p, _ := st["pid"].(float64)
	if p == 0 {
		t.Fatalf("pid result %v", got)
	}
	return int(p)
}

// A stdio server killed while calls are in flight: they fail at once (not
// at their timeout) with a temporary error, and the next call starts the
// server again.
func TestStdioServerKilledMidCall(t *testing.T) {
	var logs syncBuffer
	cfg := stdioConfig(slog.New(slog.NewTextHandler(&logs, nil)))
	cfg.CallTimeout = time.Hour // a hang would show as the test's own timeout
	c := newClient(t, cfg)
	first := pid(t, c)

	const inFlight = 3
	errs := make(chan error, inFlight)
	for range inFlight {
		go func() {
			_, err := c.Call(context.Background(), "slow", map[string]any{"seconds": 3600})
			errs <- err
		}()
	}
	time.Sleep(200 * time.Millisecond) // let the calls reach the server
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for range inFlight {
		err := <-errs
		var me *mcp.Error
		if !errors.As(err, &me) || !me.Temporary() {
			t.Errorf("in-flight call: err = %v, want a temporary *mcp.Error", err)
		}
	}
	second := pid(t, c)
	if second == first || c.Starts() != 2 {
		t.Errorf("after the kill: pid %d (was %d), Starts %d; want a new server", second, first, c.Starts())
	}
	if s := logs.String(); !strings.Contains(s, "test server starting, line 2") || !strings.Contains(s, "session lost") {
		t.Errorf("logs want the server's stderr and the lost session:\n%s", s)
	}
}

// A wedged server (stopped, not dead): the call times out, the server does
// not answer the ping that follows, and a later call runs on a new server.
func TestStdioServerWedged(t *testing.T) {
	cfg := stdioConfig(nil)
	cfg.CallTimeout = 300 * time.Millisecond
	c := newClient(t, cfg)
	first := pid(t, c)
	defer syscall.Kill(first, syscall.SIGKILL) // Close would wait for SIGKILL after two grace periods
	stop(t, first)
	_, err := c.Call(context.Background(), "echo", map[string]any{"text": "x"})
	if err == nil || !strings.Contains(err.Error(), "no answer in time") {
		t.Fatalf("err = %v, want a timeout", err)
	}
	var second int
	for range 50 { // the ping is bounded by CallTimeout; then the session is dropped
		got, err := c.Call(context.Background(), "pid", nil)
		if err == nil {
			p, _ := got["structured"].(map[string]any)["pid"].(float64)
			second = int(p)
			break
		}
	}
	if second == 0 || second == first || c.Starts() != 2 {
		t.Errorf("after the wedge: pid %d (was %d), Starts %d; want a new server", second, first, c.Starts())
	}
}

// stop stops process pid and returns once /proc shows it stopped. A
// SIGSTOP takes effect when the kernel next schedules the process: a call
// sent at once was answered now and then (about one run in thirty under
// load), so wait for the stop, sending the signal again if need be.
func stop(t *testing.T, pid int) {
	t.Helper()
	for range 100 {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		for range 10 {
			st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			if err != nil {
				t.Fatal(err)
			}
			// The state follows the command's name in parentheses.
			if f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:])); len(f) > 0 && f[0] == "T" {
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
		t.Logf("process %d not stopped yet; SIGSTOP again", pid)
	}
	t.Fatalf("process %d did not stop", pid)
}

// A restarted HTTP server has forgotten our session: the call that finds
// out fails (temporary), the next one opens a new session.
func TestHTTPServerRestarted(t *testing.T) {
	h, u := startHTTP(t)
	c := newClient(t, mcp.Config{URL: u})
	if _, err := c.Call(context.Background(), "echo", map[string]any{"text": "a"}); err != nil {
		t.Fatal(err)
	}
	h.restart()
	var err error
	for range 2 { // the first call may or may not notice; within two the session is renewed
		if _, err = c.Call(context.Background(), "echo", map[string]any{"text": "b"}); err == nil {
			break
		}
		var me *mcp.Error
		if !errors.As(err, &me) || !me.Temporary() {
			t.Fatalf("err = %v, want a temporary *mcp.Error", err)
		}
	}
	if err != nil {
		t.Fatalf("no recovery: %v", err)
	}
	if c.Starts() != 2 {
		t.Errorf("Starts = %d, want 2", c.Starts())
	}
}

// Headers (e.g. a token) go with every request to a streamable HTTP
// server; never to another host, and never into an error or a log line.
func TestHTTPHeadersAndSecrets(t *testing.T) {
	const token = "s3cr3t-T0KEN"
	const key = "k3y-VALUE-9"
	srv := testServer()
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { otherHits.Add(1) }))
	defer other.Close()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/away":
			http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
		case r.Header.Get("Authorization") != "Bearer "+token:
			http.Error(w, "no entry for "+r.Header.Get("Authorization")+" at "+r.URL.String(), http.StatusUnauthorized)
		default:
			h.ServeHTTP(w, r)
		}
	}))
	defer ts.Close()

	good := newClient(t, mcp.Config{URL: ts.URL + "/mcp?key=" + key, Headers: map[string]string{"Authorization": "Bearer " + token}})
	if _, err := good.Call(context.Background(), "echo", map[string]any{"text": "hi"}); err != nil {
		t.Fatalf("with the token: %v", err)
	}

	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	wrong := newClient(t, mcp.Config{URL: ts.URL + "/mcp?key=" + key, Headers: map[string]string{"Authorization": "Bearer wrong-" + token}, Logger: log})
	_, err := wrong.Call(context.Background(), "echo", map[string]any{"text": "hi"})
	if err == nil {
		t.Fatal("a wrong token: want an error")
	}
	away := newClient(t, mcp.Config{URL: ts.URL + "/away", Headers: map[string]string{"Authorization": "Bearer " + token}, Logger: log})
	_, err2 := away.Call(context.Background(), "echo", map[string]any{"text": "hi"})
	if err2 == nil || !strings.Contains(err2.Error(), "redirect to another host") || otherHits.Load() != 0 {
		t.Errorf("a redirect to another host: err %v, other host hit %d times", err2, otherHits.Load())
	}
	for _, s := range []string{err.Error(), err2.Error(), logs.String()} {
		if strings.Contains(s, token) || strings.Contains(s, key) {
			t.Errorf("a secret leaked: %s", s)
		}
	}
}

// A streamable HTTP server that goes away while a call is in flight: the
// call fails (it does not wait for its timeout), the next one reconnects.
func TestHTTPServerGoneMidCall(t *testing.T) {
	h := &swappable{}
	h.restart()
	ts := httptest.NewServer(h)
	defer ts.Close()
	c := newClient(t, mcp.Config{URL: ts.URL + "/mcp", CallTimeout: time.Hour})
	errs := make(chan error, 1)
	go func() {
		_, err := c.Call(context.Background(), "slow", map[string]any{"seconds": 3600})
		errs <- err
	}()
	time.Sleep(200 * time.Millisecond) // let the call reach the server
	h.restart()                        // the server forgets the session...
	ts.CloseClientConnections()        // ...and drops the connection carrying the call
	err := <-errs
	var me *mcp.Error
	if !errors.As(err, &me) || !me.Temporary() {
		t.Fatalf("in-flight call: err = %v, want a temporary *mcp.Error", err)
	}
	var lastErr error
	for range 3 {
		if _, lastErr = c.Call(context.Background(), "echo", map[string]any{"text": "again"}); lastErr == nil {
			break
		}
	}
	if lastErr != nil {
		t.Fatalf("no recovery: %v", lastErr)
	}
}

func TestUnreachableServer(t *testing.T) {
	c := newClient(t, mcp.Config{Command: []string{"/nonexistent/mcp-server"}})
	_, err := c.Call(context.Background(), "x", nil)
	var me *mcp.Error
	if !errors.As(err, &me) || !me.Temporary() || !strings.Contains(err.Error(), "mcp: server mcp-server: start") {
		t.Fatalf("err = %v, want a temporary start error", err)
	}
	if _, err := c.InputSchema(context.Background(), "x"); err == nil {
		t.Fatal("InputSchema of an unreachable server: want an error")
	}
}

// A server that exits at start: the error quotes its last stderr line.
func TestServerFailsAtStart(t *testing.T) {
	c := newClient(t, mcp.Config{Command: []string{os.Args[0]}, Env: []string{serverEnv + "=fail"}, Name: "kb"})
	_, err := c.InputSchema(context.Background(), "echo")
	var me *mcp.Error
	if !errors.As(err, &me) || !me.Temporary() || !strings.Contains(err.Error(), `mcp: server kb: start: `) ||
		!strings.Contains(err.Error(), `(its stderr: "manuals: open /srv/kb: no such file or directory")`) {
		t.Fatalf("err = %v", err)
	}
}

// A server given a secret in its environment (mcp.env: KB_TOKEN:
// ${KB_TOKEN}) that prints it on stderr and dies: neither the start error
// (which quotes the last stderr line) nor the log shows it.
func TestServerEnvSecretsNeverShown(t *testing.T) {
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := newClient(t, mcp.Config{Command: []string{os.Args[0]}, Env: []string{serverEnv + "=failsecret", "KB_TOKEN=kb-secret-42"}, Name: "kb", Logger: log})
	_, err := c.InputSchema(context.Background(), "echo")
	if err == nil || !strings.Contains(err.Error(), "kb: giving up with token [redacted]") {
		t.Fatalf("err = %v, want the stderr quote redacted", err)
	}
	if strings.Contains(err.Error()+logs.String(), "kb-secret-42") {
		t.Errorf("the secret was shown:\nerr: %v\nlogs:\n%s", err, logs.String())
	}
}

// A stdio server does not inherit our secrets; a binding passes what it
// needs explicitly (Config.Env).
func TestStdioServerEnvironment(t *testing.T) {
	t.Setenv("TRIAGE_TEST_SMTP_PASSWORD", "pw-1")
	t.Setenv("GEMINI_API_KEY", "gk-1")
	t.Setenv("TRIAGE_TEST_PLAIN", "plain-1")
	t.Setenv("PGPASSWORD", "pg-1")
	t.Setenv("DATABASE_URL", "postgres://u:p@db/x")
	t.Setenv("MY_APIKEY", "ak-1")
	t.Setenv("TZ", "Europe/Warsaw")
	cfg := stdioConfig(nil)
	cfg.Env = append(cfg.Env, "KB_TOKEN=passed-1", "KB_URL=http://kb")
	c := newClient(t, cfg)
	// Only the allowlist and the binding's env: pass; a value the binding
	// passes is a secret, redacted from whatever the server answers.
	for name, want := range map[string]string{"TRIAGE_TEST_SMTP_PASSWORD": "", "GEMINI_API_KEY": "", "TRIAGE_TEST_PLAIN": "",
		"PGPASSWORD": "", "DATABASE_URL": "", "MY_APIKEY": "", "TZ": "Europe/Warsaw", "KB_TOKEN": "[redacted]", "KB_URL": "[redacted]"} {
		got, err := c.Call(context.Background(), "getenv", map[string]any{"text": name})
		if err != nil {
			t.Fatal(err)
		}
		if got["text"] != name+"="+want {
			t.Errorf("the server sees %v, want %s=%s", got["text"], name, want)
		}
	}
}

func TestInputSchema(t *testing.T) {
	transports(t, func(t *testing.T, c *mcp.Client) {
		got, err := c.InputSchema(context.Background(), "echo")
		if err != nil {
			t.Fatal(err)
		}
		props, _ := got["properties"].(map[string]any)
		text, _ := props["text"].(map[string]any)
		if got["type"] != "object" || text["type"] != "string" {
			t.Errorf("inputSchema = %v", got)
		}
		_, err = c.InputSchema(context.Background(), "nope")
		if err == nil || !strings.Contains(err.Error(), `no tool "nope" (it has: echo, fail, failenv, getenv, pid, protocol_error, slow)`) {
			t.Errorf("unknown tool: %v", err)
		}
	})
}

func TestStderrIsLoggedBounded(t *testing.T) {
	var logs syncBuffer
	cfg := stdioConfig(slog.New(slog.NewTextHandler(&logs, nil)))
	cfg.MaxStderrBytes = 40 // about one line
	c := newClient(t, cfg)
	if _, err := c.Call(context.Background(), "echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	s := logs.String()
	if !strings.Contains(s, "line 0") || strings.Contains(s, "line 2") || !strings.Contains(s, "dropping") {
		t.Errorf("want the first line logged, the rest dropped and counted:\n%s", s)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, cfg := range []mcp.Config{
		{},
		{Command: []string{"x"}, URL: "http://127.0.0.1/mcp"},
		{Command: []string{""}},
		{URL: "ftp://x/mcp"},
	} {
		if _, err := mcp.New(context.Background(), cfg); err == nil || !strings.HasPrefix(err.Error(), "mcp: ") {
			t.Errorf("New(%+v) = %v, want an mcp error", cfg, err)
		}
	}
}

func TestCallAfterClose(t *testing.T) {
	_, u := startHTTP(t)
	c, err := mcp.New(context.Background(), mcp.Config{URL: u})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Call(context.Background(), "echo", nil); !errors.Is(err, mcp.ErrClosed) {
		t.Fatalf("err = %v, want ErrClosed", err)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
