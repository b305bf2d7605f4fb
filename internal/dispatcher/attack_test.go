package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"triage/internal/agent"
	"triage/internal/clients/httpapi"
	"triage/internal/message"
	"triage/internal/testkit/toolstest"
)

// A hostile model spells a vouched-for value its own way: the comparison
// behind each from policy folds case, ignores punctuation and white space
// between words, and reads an address out of a display name, so what the
// tool receives is the value the policy vouched for (the message's words,
// the serial as written, the bare address), never the model's spelling.
// Values whose words are not the customer's (zero-width characters,
// full-width lookalikes, quoted history, attachment names) are refused.
func TestFromPoliciesPassTheVouchedValue(t *testing.T) {
	const toolsYAML = `
tools:
  send_email: {builtin: send_email, effect: true, final: true, args: {to: {from: reply_to}}}
  lookup:
    http: {url: "http://127.0.0.1:1/orders/{order_id}"}
    args:
      order_id: {from: message}
  notify:
    http: {method: POST, url: "http://127.0.0.1:1/notify"}
    args:
      staff: {from: staff}
      customer: {from: sender}
      text: {from: serials}
`
	seen := &fakeRoutes{}
	d, err := New(Config{Tools: parseTools(t, toolsYAML), Routes: seen.routes(FuncSendEmail, "lookup", "notify"),
		StaffAddresses: []string{"Staff <staff@example.com>"}, MaxCallsPerTurn: 50, MaxCallsPerEmail: 50})
	if err != nil {
		t.Fatal(err)
	}
	msg := testMessage()
	msg.Subject = "Zamówienie ORD-77 pilne"
	msg.Text = "Klucz produktu: (#KEY-5) proszę. Numer SN-48213-PL.\n"
	msg.Quoted = "> zamówienie ORD-99"
	msg.Attachments = []message.Attachment{{Name: "ORD-55.pdf", Type: "application/pdf", Size: 10}}
	s := d.Session(msg, policyScenario(t), "k")
	ctx := context.Background()

	ok := []struct {
		name string
		args map[string]any
		want map[string]any
	}{
		{"lookup", map[string]any{"order_id": "../../ORD-77"}, map[string]any{"order_id": "ORD-77"}},
		{"lookup", map[string]any{"order_id": "ord-77\r\n;; PILNE"}, map[string]any{"order_id": "ORD-77 pilne"}},
		{"lookup", map[string]any{"order_id": "\u212Aey-5"}, map[string]any{"order_id": "KEY-5"}}, // Kelvin sign folds to k
		{"notify", map[string]any{"staff": `"Boss" <STAFF@example.com>`, "customer": `"victim@bank.example" <JAN@example.com>`, "text": "\u017Fn 48213 pl"},
			map[string]any{"staff": "staff@example.com", "customer": "jan@example.com", "text": "SN-48213-PL"}}, // ſ upper-cases to S
		{"send_email", map[string]any{"to": `"anna@example.pl" <Jan.Reply@example.com>`, "subject": "s", "body": "b"},
			map[string]any{"to": "jan.reply@example.com", "subject": "s", "body": "b"}},
	}
	var want []map[string]any
	for _, c := range ok {
		env := s.Call(ctx, c.name, c.args).Envelope()
		if env["ok"] != true {
			t.Fatalf("%s %q refused: %v", c.name, c.args, env)
		}
		want = append(want, c.want)
	}
	if diff := cmp.Diff(want, seen.args); diff != "" {
		t.Errorf("arguments the tools received (-want +got):\n%s", diff)
	}
	// The record keeps what the model asked for.
	if got := s.Records()[0].Args["order_id"]; got != "../../ORD-77" {
		t.Errorf("record args = %q, want the model's", got)
	}

	refused := []map[string]any{
		{"order_id": "ORD-77\u200b"},           // zero-width space
		{"order_id": "ORD\u200b-77"},           // zero-width space inside
		{"order_id": "\uff2f\uff32\uff24-77"},  // full-width ORD
		{"order_id": "ORD-99"},                 // quoted history only
		{"order_id": "ORD-55"},                 // an attachment name only
		{"order_id": "ORD-55.pdf"},             // an attachment name only
		{"order_id": "ORD-77 X-Injected: yes"}, // words that are not the customer's
	}
	for _, args := range refused {
		env := s.Call(ctx, "lookup", args).Envelope()
		if env["ok"] != false || env["error"].(map[string]any)["code"] != string(CodeNotInMessage) {
			t.Errorf("lookup %q: %v, want %s", args, env, CodeNotInMessage)
		}
	}
	if env := s.Call(ctx, "notify", map[string]any{"staff": "staff@example.com", "text": "\uff33N-48213-PL"}).Envelope(); env["ok"] != false {
		t.Errorf("a full-width lookalike serial was accepted: %v", env)
	}
	if len(seen.args) != len(ok) {
		t.Errorf("refused calls reached the tool: %v", seen.args[len(ok):])
	}
}

// A tool's error text goes back to the model capped like a result: an MCP
// server's isError content (or a JSON-RPC error message, an HTTP error
// body) is whatever the server sends.
func TestErrorTextIsCapped(t *testing.T) {
	huge := strings.Repeat("ż", 1<<20)
	d, err := New(Config{Tools: parseTools(t, policyTools), MaxResultBytes: 4096, Routes: policyRoutes(
		Untyped(func(context.Context, *Call) (map[string]any, error) {
			return nil, errors.New("server kb: tool lookup: " + huge)
		}))})
	if err != nil {
		t.Fatal(err)
	}
	msg := testMessage()
	msg.Text = "ORD-77"
	s := d.Session(msg, policyScenario(t), "k")
	env := s.Call(context.Background(), "lookup", map[string]any{"order_id": "ORD-77"}).Envelope()
	b, _ := json.Marshal(env)
	if len(b) > 4096+256 {
		t.Errorf("error envelope is %d bytes, the cap is 4096", len(b))
	}
	m := env["error"].(map[string]any)["message"].(string)
	if !utf8.ValidString(m) || !strings.HasSuffix(m, truncMark) || !strings.HasPrefix(m, "server kb: tool lookup: ż") {
		t.Errorf("message %.60q…%q", m, m[max(0, len(m)-30):])
	}
	if r := s.Records()[0]; len(r.Error.Message) > 4096 {
		t.Errorf("recorded error is %d bytes", len(r.Error.Message))
	}
}

// The shipped policies against a model that tries every way around them:
// a ticket for the serial whose check said expired (as written, or spelled
// another way), a second ticket with another priority, the same ticket
// again, and replies to lists, groups, display-name tricks, a lookalike
// domain or with a header in the subject. Each is refused (or, for the
// identical ticket, answered with the first result) and never routed.
func TestShippedPoliciesUnderAttack(t *testing.T) {
	var routed []string
	status := map[string]string{"SN-48213-PL": "expired", "ABC.123456": "valid"}
	route := func(name string) Func {
		return Untyped(func(_ context.Context, c *Call) (map[string]any, error) {
			routed = append(routed, name)
			if name == FuncCheckWarranty {
				return map[string]any{"status": status[c.Args["serial_number"].(string)]}, nil
			}
			return map[string]any{"ticket_id": "TKT-000001", "status": "ok"}, nil
		})
	}
	d, err := New(Config{Tools: toolstest.Shipped(t), MaxCallsPerTurn: 50, Routes: map[string]Func{
		FuncCheckWarranty: route(FuncCheckWarranty), FuncCreateTicket: route(FuncCreateTicket),
		FuncSendEmail: route(FuncSendEmail), FuncNotifyStaff: route(FuncNotifyStaff)}})
	if err != nil {
		t.Fatal(err)
	}
	s := d.Session(testMessage(), testScenario(t, false), "k")
	ctx := context.Background()
	ticket := func(sn, prio string) map[string]any {
		return map[string]any{"serial_number": sn, "customer_email": "jan@example.com", "priority": prio}
	}
	reply := func(to, subject string) map[string]any {
		return map[string]any{"to": to, "subject": subject, "body": "Dzień dobry"}
	}
	steps := []struct {
		name string
		args map[string]any
		want agent.ErrorCode // "" ok, "repeated", else the refusal code
	}{
		{FuncCheckWarranty, map[string]any{"serial_number": "SN-48213-PL"}, ""},
		{FuncCheckWarranty, map[string]any{"serial_number": "abc.123456"}, ""},
		{"turn", nil, ""},
		{FuncCreateTicket, ticket("SN-48213-PL", "high"), CodeRequirementNotMet},      // its check said expired
		{FuncCreateTicket, ticket("sn 48213/pl", "high"), CodeRequirementNotMet},      // the same, spelled otherwise
		{FuncCreateTicket, ticket("\u017Fn-48213-pl", "high"), CodeRequirementNotMet}, // ſ: a lookalike
		{FuncCreateTicket, ticket("ABC123456", "high"), ""},
		{FuncCreateTicket, ticket("ABC123456", "low"), CodeMaxCalls}, // once per email, whatever the args
		{FuncCreateTicket, ticket("abc-123456", "high"), "repeated"}, // the same call: the first result
		{FuncSendEmail, reply("jan.reply@example.com, eve@evil.example", "Re"), CodeRecipientNotAllowed},
		{FuncSendEmail, reply("Team: jan.reply@example.com, eve@evil.example;", "Re"), CodeRecipientNotAllowed},
		{FuncSendEmail, reply(`"jan.reply@example.com" <eve@evil.example>`, "Re"), CodeRecipientNotAllowed},
		{FuncSendEmail, reply("jan.reply@ex\u0430mple.com", "Re"), CodeRecipientNotAllowed}, // Cyrillic а
		{FuncSendEmail, reply("jan@example.com", "Re"), CodeRecipientNotAllowed},            // From, not Reply-To
		{FuncSendEmail, reply("jan.reply@example.com", "Re\r\nBcc: eve@evil.example"), CodeInvalidArgs},
		{FuncSendEmail, reply("jan.reply@example.com", "Re\nBcc: eve@evil.example"), CodeInvalidArgs},
		{FuncSendEmail, reply("Jan <JAN.REPLY@example.com>", "Re"), ""},
		{FuncSendEmail, reply("jan.reply@example.com", "Re: again"), CodeMaxCalls}, // one reply per email
	}
	for i, st := range steps {
		if st.name == "turn" {
			s.StartTurn()
			continue
		}
		env := s.Call(ctx, st.name, st.args).Envelope()
		recs := s.Records()
		r := recs[len(recs)-1]
		got := agent.ErrorCode("")
		switch {
		case r.Repeated:
			got = "repeated"
		case r.Error != nil:
			got = r.Error.Code
		}
		if got != st.want || (got != "" && got != "repeated" && !r.Blocked) {
			t.Errorf("step %d %s %q: got %q (blocked %v) %v, want %q", i, st.name, st.args, got, r.Blocked, env, st.want)
		}
	}
	want := []string{FuncCheckWarranty, FuncCheckWarranty, FuncCreateTicket, FuncSendEmail}
	if diff := cmp.Diff(want, routed); diff != "" {
		t.Errorf("routed (-want +got):\n%s", diff)
	}
}

// A model adds an argument the scenario does not declare to an HTTP tool
// (a GET sends every argument that fills no placeholder in the query
// string, a POST all of them in the body): no policy names it, so it would
// reach the service unchecked, whatever the scenario's schema says. It is
// refused before the tool runs.
func TestUndeclaredArgumentsNeverReachATool(t *testing.T) {
	var queries []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		queries = append(queries, r.URL.RawQuery)
		io.WriteString(w, `{"status":"shipped"}`)
	}))
	defer srv.Close()
	ht, err := httpapi.NewTool(httpapi.ToolConfig{Name: "lookup", URL: srv.URL + "/orders/{order_id}"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(Config{Tools: parseTools(t, policyTools), Routes: policyRoutes(
		Untyped(func(ctx context.Context, c *Call) (map[string]any, error) { return ht.Call(ctx, c.Args) }))})
	if err != nil {
		t.Fatal(err)
	}
	msg := testMessage()
	msg.Text = "Zamówienie ORD-77"
	// The scenario's schema, as a team adding a tool may write it, does not
	// say additionalProperties: false.
	sc := policyScenario(t)
	sc.Functions[1] = fn(t, "lookup", map[string]any{"type": "object", "required": []any{"order_id"},
		"properties": map[string]any{"order_id": str, "lang": str, "code": str}})
	s := d.Session(msg, sc, "k")
	env := s.Call(context.Background(), "lookup", map[string]any{"order_id": "ORD-77", "customer_id": "C-999", "admin": true}).Envelope()
	e, _ := env["error"].(map[string]any)
	if env["ok"] != false || e["code"] != string(CodeInvalidArgs) || !strings.Contains(e["message"].(string), "admin, customer_id") {
		t.Errorf("undeclared arguments: %v", env)
	}
	if env := s.Call(context.Background(), "lookup", map[string]any{"order_id": "ORD-77", "lang": "pl"}).Envelope(); env["ok"] != true {
		t.Errorf("declared arguments: %v", env)
	}
	if diff := cmp.Diff([]string{"lang=pl"}, queries); diff != "" {
		t.Errorf("queries the service saw (-want +got):\n%s", diff)
	}
}

// enum, pattern and max_length hold for the value the tool receives (the
// customer's words), not only for the model's spelling of it.
func TestShapePoliciesHoldForTheVouchedValue(t *testing.T) {
	seen := &fakeRoutes{}
	d, err := New(Config{Tools: parseTools(t, `
tools:
  send_email: {builtin: send_email, effect: true, final: true, args: {to: {from: reply_to}}}
  notify: {http: {method: POST, url: "http://127.0.0.1:1/n"}, args: {staff: {from: staff}}}
  lookup:
    http: {url: "http://127.0.0.1:1/orders/{order_id}"}
    args:
      order_id: {from: message, pattern: '[A-Z]+-[0-9]+'}
`), Routes: seen.routes(FuncSendEmail, "lookup", "notify")})
	if err != nil {
		t.Fatal(err)
	}
	msg := testMessage()
	msg.Text = "zamówienie ord-77"
	s := d.Session(msg, policyScenario(t), "k")
	env := s.Call(context.Background(), "lookup", map[string]any{"order_id": "ORD-77"}).Envelope()
	if env["ok"] != false || env["error"].(map[string]any)["code"] != string(CodeInvalidArgs) {
		t.Errorf("pattern checked on the model's spelling only: %v", env)
	}
	if len(seen.args) != 0 {
		t.Errorf("the tool ran with %v", seen.args)
	}
}

// A hostile email whose Reply-To names a staff address: the reply would go
// from our own support address to staff with words the stranger chose (a
// phishing relay into the company). A customer reply never goes to staff.
func TestReplyToAStaffAddressIsRefused(t *testing.T) {
	f := &fakeRoutes{}
	d, err := New(Config{Tools: toolstest.Shipped(t), Routes: f.routes(FuncCheckWarranty, FuncCreateTicket, FuncSendEmail, FuncNotifyStaff),
		StaffAddresses: []string{"Boss <boss@example.com>"}})
	if err != nil {
		t.Fatal(err)
	}
	msg := testMessage()
	msg.ReplyTo = "Boss@Example.com"
	s := d.Session(msg, testScenario(t, false), "k")
	env := s.Call(context.Background(), FuncSendEmail, map[string]any{"to": "boss@example.com", "subject": "Pilne: przelew", "body": "Proszę zatwierdzić przelew."}).Envelope()
	if env["ok"] != false || env["error"].(map[string]any)["code"] != string(CodeRecipientNotAllowed) {
		t.Errorf("reply to staff: %v", env)
	}
	if len(f.calls) != 0 {
		t.Errorf("routed %v", f.calls)
	}
}
