package dispatcher_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"triage"
	"triage/internal/clients/httpapi"
	"triage/internal/dispatcher"
	"triage/internal/instructions"
	"triage/internal/manuals"
)

const manualsDir = "../../examples/manuals"

// serverEnv makes the test binary our manuals MCP server over stdio.
const serverEnv = "TRIAGE_BACKENDS_TEST_MANUALS"

// childEnv marks a child process of these tests: one that is not asked to
// be the server exits at once instead of running the tests again.
const childEnv = "TRIAGE_BACKENDS_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" && os.Getenv(serverEnv) != "1" {
		os.Exit(3)
	}
	os.Setenv(childEnv, "1")
	if os.Getenv(serverEnv) == "1" {
		lib, err := manuals.Load(manualsDir)
		if err == nil {
			err = manuals.NewServer(lib).Run(context.Background(), &sdk.StdioTransport{})
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// manualsHTTP serves the manuals over streamable HTTP, in-process.
func manualsHTTP(t *testing.T) string {
	t.Helper()
	lib, err := manuals.Load(manualsDir)
	if err != nil {
		t.Fatal(err)
	}
	srv := manuals.NewServer(lib)
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

func parseTools(t *testing.T, yaml string, env map[string]string) *instructions.Tools {
	t.Helper()
	ts, err := instructions.ParseTools("tools.yaml", []byte(yaml), instructions.ToolsConfig{LookupEnv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}})
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

const toolsYAML = `
tools:
  order_status:
    http: {method: GET, url: "${ORDERS}/orders/{order_id}", headers: {Authorization: "Bearer ${TOKEN}"}}
  search_manual:
    mcp: {command: ["${SELF}"], env: {TRIAGE_BACKENDS_TEST_MANUALS: "1"}}
  lookup:                    # the same server under another name: one process
    mcp: {command: ["${SELF}"], env: {TRIAGE_BACKENDS_TEST_MANUALS: "1"}, tool: search_manual}
  search_http:
    mcp: {url: "${MANUALS_URL}", tool: search_manual}
  search_hasty:              # the same HTTP server, with a timeout no call can meet
    mcp: {url: "${MANUALS_URL}", tool: search_manual, timeout: 1ns}
  send_email:
    builtin: send_email
    final: true
`

func start(t *testing.T, ts *instructions.Tools, log *slog.Logger) *dispatcher.Backends {
	t.Helper()
	t.Setenv(serverEnv, "1") // for other children; the stdio servers get it through their env:
	b, err := dispatcher.StartBackends(context.Background(), dispatcher.BackendsConfig{Tools: ts, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return b
}

func TestRoutes(t *testing.T) {
	var gotAuth, gotPath string
	orders := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth, gotPath = r.Header.Get("Authorization"), r.URL.Path
		io.WriteString(w, `{"status":"shipped"}`)
	}))
	defer orders.Close()
	ts := parseTools(t, toolsYAML, map[string]string{
		"ORDERS": orders.URL, "TOKEN": "t0k3n", "SELF": os.Args[0], "MANUALS_URL": manualsHTTP(t),
	})
	b := start(t, ts, nil)
	if b.Servers() != 2 {
		t.Errorf("Servers = %d, want 2 (stdio shared by two bindings, and HTTP)", b.Servers())
	}
	routes := b.Routes()
	if _, ok := routes["send_email"]; ok || len(routes) != 5 {
		t.Errorf("routes %v: want the five http/mcp bindings only", routes)
	}
	ctx := context.Background()
	r, err := routes["order_status"](ctx, &dispatcher.Call{Name: "order_status", Args: map[string]any{"order_id": "A 1"}})
	res := r.Value
	if err != nil || res["status"] != "shipped" || gotAuth != "Bearer t0k3n" || gotPath != "/orders/A 1" {
		t.Errorf("http route: %v %v auth %q path %q", res, err, gotAuth, gotPath)
	}
	_, err = routes["search_hasty"](ctx, &dispatcher.Call{Name: "search_hasty", Args: map[string]any{"query": "reset"}})
	var tmp interface{ Temporary() bool }
	if !errors.As(err, &tmp) || !tmp.Temporary() {
		t.Errorf("a binding's own timeout: err = %v, want a temporary timeout", err)
	}
	for _, name := range []string{"search_manual", "lookup", "search_http"} {
		r, err := routes[name](ctx, &dispatcher.Call{Name: name, Args: map[string]any{"query": "Bluetooth pairing Cyclone"}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		res := r.Value
		st, _ := res["structured"].(map[string]any)
		if txt, _ := res["text"].(string); !strings.Contains(txt, "CYCLONE-X2") || st["found"] != true {
			t.Errorf("%s: %v", name, res)
		}
	}
}

func scenarios(t *testing.T, params string) *instructions.Scenarios {
	t.Helper()
	sc := `---
name: ask
description: asks about a product
version: 1.0.0
available_functions:
  - name: search_manual
    description: search
    parameters: ` + params + `
  - name: send_email
    description: send
    parameters: {type: object, properties: {to: {type: string}, subject: {type: string}, body: {type: string}}, required: [to, subject, body]}
---
Answer from the manual.
`
	set, err := instructions.LoadScenarios(fstest.MapFS{
		"main.md":          {Data: []byte("Shared rules.\n")},
		"scenarios/ask.md": {Data: []byte(sc)},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

const oneTool = `
tools:
  search_manual:
    mcp: {command: ["${SELF}"], env: {TRIAGE_BACKENDS_TEST_MANUALS: "1"}}
  send_email:
    builtin: send_email
    final: true
`

func TestCheck(t *testing.T) {
	ts := parseTools(t, oneTool, map[string]string{"SELF": os.Args[0]})
	b := start(t, ts, nil)
	ctx := context.Background()
	good := scenarios(t, `{type: object, properties: {query: {type: string}}, required: [query]}`)
	if err := b.Check(ctx, good, true); err != nil {
		t.Errorf("a fitting declaration: %v", err)
	}
	for _, tc := range []struct{ params, want string }{
		{`{type: object, properties: {query: {type: integer}}, required: [query]}`, "parameter query: declared type integer, the server wants [string]"},
		{`{type: object, properties: {q: {type: string}}}`, "parameter q: the server's tool has no such parameter"},
	} {
		err := b.Check(ctx, scenarios(t, tc.params), false)
		if err == nil || !strings.Contains(err.Error(), tc.want) ||
			!strings.Contains(err.Error(), "tools: tools.yaml: search_manual: declared in scenarios/ask.md") {
			t.Errorf("%s: err = %v, want %q naming the file, tool and scenario", tc.params, err, tc.want)
		}
	}
}

// An unreachable server: start-up goes on (logged), `triage check` fails.
func TestCheckUnreachable(t *testing.T) {
	ts := parseTools(t, oneTool, map[string]string{"SELF": "/nonexistent/manuals-server"})
	var logs bytes.Buffer
	b := start(t, ts, slog.New(slog.NewTextHandler(&logs, nil)))
	set := scenarios(t, `{type: object, properties: {query: {type: string}}}`)
	if err := b.Check(context.Background(), set, false); err != nil {
		t.Errorf("start-up check of an unreachable server: %v", err)
	}
	if !strings.Contains(logs.String(), "not reachable") {
		t.Errorf("logs: %s", logs.String())
	}
	err := b.Check(context.Background(), set, true)
	if err == nil || !strings.Contains(err.Error(), "tools: tools.yaml: search_manual: mcp: server manuals-server: start") {
		t.Errorf("strict check: %v", err)
	}
}

// env: in a binding reaches the stdio server (which the test's own
// environment does not make a server).
func TestBindingEnv(t *testing.T) {
	t.Setenv(serverEnv, "")
	ts := parseTools(t, `
tools:
  search_manual:
    mcp: {command: ["${SELF}"], env: {`+serverEnv+`: "${ONE}"}}
`, map[string]string{"SELF": os.Args[0], "ONE": "1"})
	b, err := dispatcher.StartBackends(context.Background(), dispatcher.BackendsConfig{Tools: ts})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	r, err := b.Routes()["search_manual"](context.Background(), &dispatcher.Call{Args: map[string]any{"query": "descale"}})
	res := r.Value
	if err != nil || res["text"] == nil {
		t.Fatalf("%v %v", res, err)
	}
}

func TestStartRejectsBadHTTPBinding(t *testing.T) {
	ts := parseTools(t, `
tools:
  x:
    http: {method: GET, url: "http://127.0.0.1/x", headers: {"X-A": "a\r\nB: c"}}
`, nil)
	_, err := dispatcher.StartBackends(context.Background(), dispatcher.BackendsConfig{Tools: ts})
	if err == nil || !strings.Contains(err.Error(), "backends: tools.yaml: x: http: ") {
		t.Errorf("err = %v", err)
	}
}

// An HTTP tool with an effect (a refund, an RMA) sends an Idempotency-Key
// derived from the email and the call: the same email processed again
// after a crash before its reply, or a call retried after a timeout, sends
// the same key, so the service can refuse to act twice; another email or
// other arguments send another. A tool without an effect sends none.
func TestEffectHTTPToolSendsAnIdempotencyKey(t *testing.T) {
	var mu sync.Mutex
	keys := map[string][]string{}
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys[r.URL.Path] = append(keys[r.URL.Path], r.Header.Get("Idempotency-Key"))
		mu.Unlock()
		io.WriteString(w, `{"ok":true}`)
	}))
	defer svc.Close()
	ts := parseTools(t, `
tools:
  refund:
    http: {method: POST, url: "${SVC}/refund"}
    effect: true
  status:
    http: {url: "${SVC}/status"}
`, map[string]string{"SVC": svc.URL})
	b, err := dispatcher.StartBackends(context.Background(), dispatcher.BackendsConfig{Tools: ts})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	call := func(name, key string, args map[string]any) {
		t.Helper()
		if _, err := b.Routes()[name](ctx, &dispatcher.Call{Name: name, Key: triage.Key(key), Args: args}); err != nil {
			t.Fatal(err)
		}
	}
	call("refund", "email-1", map[string]any{"order_id": "A1", "amount": 10.0})
	call("refund", "email-1", map[string]any{"amount": 10.0, "order_id": "A1"}) // the same email again
	call("refund", "email-2", map[string]any{"order_id": "A1", "amount": 10.0})
	call("refund", "email-1", map[string]any{"order_id": "A1", "amount": 20.0})
	call("status", "email-1", map[string]any{})
	mu.Lock()
	defer mu.Unlock()
	r := keys["/refund"]
	if len(r) != 4 || r[0] == "" || r[0] != r[1] || r[2] == r[0] || r[3] == r[0] || r[3] == r[2] {
		t.Errorf("refund keys %q: want the same key for the same email and call, others differ", r)
	}
	if r[0] != httpapi.EffectKey("email-1", "refund", map[string]any{"order_id": "A1", "amount": 10.0}) {
		t.Errorf("key %q is not EffectKey's", r[0])
	}
	if s := keys["/status"]; len(s) != 1 || s[0] != "" {
		t.Errorf("a tool without an effect sent %q", s)
	}
}

// Lazy: no MCP server starts with the backends; the first call of a tool
// starts its server and checks the tool's declaration first. A fitting
// one is called; a misfit fails every call, naming the file, the tool, the
// scenario and the parameter, and the tool is never called.
func TestLazyStart(t *testing.T) {
	t.Setenv(serverEnv, "1")
	ts := parseTools(t, oneTool, map[string]string{"SELF": os.Args[0]})
	ctx := context.Background()
	open := func(set *instructions.Scenarios) *dispatcher.Backends {
		b, err := dispatcher.StartBackends(ctx, dispatcher.BackendsConfig{Tools: ts, Lazy: true, Scenarios: set})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		if b.Started() != 0 {
			t.Fatalf("a lazy start started %d servers", b.Started())
		}
		return b
	}
	call := func(b *dispatcher.Backends) (map[string]any, error) {
		r, err := b.Routes()["search_manual"](ctx, &dispatcher.Call{Name: "search_manual", Args: map[string]any{"query": "Bluetooth pairing Cyclone"}})
		return r.Value, err
	}

	b := open(scenarios(t, `{type: object, properties: {query: {type: string}}, required: [query]}`))
	res, err := call(b)
	if txt, _ := res["text"].(string); err != nil || !strings.Contains(txt, "CYCLONE-X2") {
		t.Errorf("first call: %v, %v", res, err)
	}
	if b.Started() != 1 {
		t.Errorf("after the first call: %d servers started, want 1", b.Started())
	}

	bad := open(scenarios(t, `{type: object, properties: {query: {type: integer}}, required: [query]}`))
	for range 2 {
		_, err := call(bad)
		var de *dispatcher.Error
		if !errors.As(err, &de) || !strings.Contains(de.Message, "tools: tools.yaml: search_manual: declared in scenarios/ask.md") ||
			!strings.Contains(de.Message, "parameter query: declared type integer, the server wants [string]") {
			t.Errorf("call with a misfit declaration: %v", err)
		}
	}
	if bad.Started() != 1 {
		t.Errorf("misfit: %d sessions started, want 1 (to read the schema, once)", bad.Started())
	}
	if _, err := dispatcher.StartBackends(ctx, dispatcher.BackendsConfig{Tools: ts, Lazy: true}); err == nil {
		t.Error("Lazy without Scenarios: want an error")
	}
}
