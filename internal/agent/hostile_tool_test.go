package agent_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"triage/internal/agent"
	"triage/internal/clients/httpapi"
	"triage/internal/dispatcher"
	"triage/internal/instructions"
	"triage/internal/message"
	"triage/internal/testkit/geminitest"
)

// A hostile model against an HTTP tool no Go code knows about, through the
// real genai client, the real dispatcher and the real HTTP tool against an
// httptest service: an argument the scenario does not declare (which a GET
// would send in the query string) is refused, and a from: message value
// spelled with a path, other case and trailing punctuation reaches the
// service as the customer wrote it. The service sees exactly one request:
// /orders/ORD-77, no query.
func TestHostileModelAgainstAnHTTPTool(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.EscapedPath()+"?"+r.URL.RawQuery)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"shipped"}`))
	}))
	defer srv.Close()
	ts, err := instructions.ParseTools("tools.yaml", []byte(`
tools:
  get_order_status:
    http: {url: "${ORDERS}/orders/{order_id}"}
    args:
      order_id: {from: message, max_length: 20}
`), instructions.ToolsConfig{LookupEnv: func(string) (string, bool) { return srv.URL, true }})
	if err != nil {
		t.Fatal(err)
	}
	ht, err := httpapi.NewTool(httpapi.ToolConfig{Name: "get_order_status", URL: ts.Get("get_order_status").HTTP.URL})
	if err != nil {
		t.Fatal(err)
	}
	d, err := dispatcher.New(dispatcher.Config{Tools: ts, Routes: map[string]dispatcher.Func{
		"get_order_status": dispatcher.Untyped(func(ctx context.Context, c *dispatcher.Call) (map[string]any, error) { return ht.Call(ctx, c.Args) }),
	}})
	if err != nil {
		t.Fatal(err)
	}
	// The scenario's schema, as a team adding a tool may write it: no
	// additionalProperties: false.
	params := map[string]any{"type": "object", "required": []any{"order_id"},
		"properties": map[string]any{"order_id": map[string]any{"type": "string"}}}
	sc := &instructions.Scenario{Name: "orders", Body: "x", Functions: []instructions.Function{{Name: "get_order_status", Description: "d", Parameters: params}}}
	msg := &message.Message{MessageID: "<in@x>", From: mail.Address{Address: "ola@example.pl"}, ReplyTo: "ola@example.pl",
		Subject: "Zamówienie ORD-77", Text: "Gdzie jest moja paczka?"}
	session := d.Session(msg, sc, "k")

	f := geminitest.New(t,
		geminitest.One(geminitest.Call("c1", "get_order_status", map[string]any{"order_id": "ORD-77", "customer_id": "C-1", "admin": "true"})),
		geminitest.One(geminitest.Call("c2", "get_order_status", map[string]any{"order_id": "../../ord-77;;"})),
		geminitest.One(geminitest.Text("Paczka jest w drodze.")),
	)
	a := newAgent(t, gemini(f), &sleeps{}, nil)
	req := agent.Request{System: system, Prompt: prompt,
		Functions: []*genai.FunctionDeclaration{{Name: "get_order_status", Description: "d", ParametersJsonSchema: params}}}
	if _, err := a.Run(context.Background(), req, session); err != nil {
		t.Fatal(err)
	}
	recs := session.Records()
	if len(recs) != 2 || recs[0].Error == nil || recs[0].Error.Code != dispatcher.CodeInvalidArgs || !recs[1].OK {
		t.Fatalf("records %+v", recs)
	}
	if !strings.Contains(recs[0].Error.Message, "admin, customer_id") {
		t.Errorf("refusal %q does not name the undeclared arguments", recs[0].Error.Message)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"/orders/ORD-77?"}, seen); diff != "" {
		t.Errorf("requests the service saw (-want +got):\n%s", diff)
	}
}
