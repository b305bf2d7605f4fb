package dispatcher

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"triage/internal/agent"
	"triage/internal/instructions"
)

// policyTools declares a tool no Go code knows about with every kind of
// policy, and a staff notification with from: staff.
const policyTools = `
tools:
  send_email: {builtin: send_email, effect: true, final: true, args: {to: {from: reply_to}}}
  lookup:
    http: {url: "http://127.0.0.1:1/orders/{order_id}"}
    max_calls: 2
    args:
      order_id: {from: message, max_length: 20}
      lang: {enum: [pl, en]}
      code: {pattern: '[A-Z]{2}-[0-9]{3}'}
  notify:
    http: {method: POST, url: "http://127.0.0.1:1/notify"}
    effect: true
    max_calls: 2
    args:
      staff: {from: staff}
      customer: {from: sender}
`

func policyScenario(t *testing.T) *instructions.Scenario {
	return &instructions.Scenario{Name: "p", Body: "x", Functions: []instructions.Function{
		fn(t, FuncSendEmail, obj([]any{"to", "subject", "body"}, map[string]any{"to": str, "subject": str, "body": str})),
		fn(t, "lookup", obj([]any{"order_id"}, map[string]any{"order_id": str, "lang": str, "code": str})),
		fn(t, "notify", obj([]any{"staff"}, map[string]any{"staff": str, "customer": str, "text": str})),
	}}
}

// policyRoutes implements policyTools: lookup as given, send_email and
// notify by fakeRoutes.
func policyRoutes(lookup Func) map[string]Func {
	m := (&fakeRoutes{}).routes(FuncSendEmail, "notify")
	m["lookup"] = lookup
	return m
}

func TestPolicies(t *testing.T) {
	f := &fakeRoutes{}
	d, err := New(Config{
		Tools:           parseTools(t, policyTools),
		Routes:          f.routes(FuncSendEmail, "lookup", "notify"),
		StaffAddresses:  []string{"Staff <staff@example.com>"},
		MaxCallsPerTurn: 50,
		Now:             stepClock(),
	})
	if err != nil {
		t.Fatal(err)
	}
	msg := testMessage()
	msg.Subject = "Zamówienie 2026-0042 nie dotarło"
	msg.Text = "Dzień dobry, numer zamówienia: ORD-77 (pilne). Prosze o status.\n"
	msg.Quoted = "> zamówienie 99999"
	s := d.Session(msg, policyScenario(t), "key-1")
	lk := func(kv ...string) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	steps := []struct {
		name string
		args map[string]any
		want agent.ErrorCode // "" ok, "repeated", else the refusal code
	}{
		// from: message: whole tokens of the subject or new text, never a
		// substring, never the quoted history.
		{"lookup", lk("order_id", "ORD-77"), ""},
		{"lookup", lk("order_id", "ord-77"), ""},                  // case-insensitive
		{"lookup", lk("order_id", "2026-0042 nie"), CodeMaxCalls}, // max_calls: 2 (a non-effect)
		{"notify", lk("staff", "staff@example.com", "customer", "jan@example.com", "text", "a"), ""},
		{"notify", lk("staff", "staff@example.com", "customer", "jan@example.com", "text", "a"), "repeated"},
		{"notify", lk("staff", "jan.reply@example.com", "customer", "jan@example.com"), CodeRecipientNotAllowed},
		{"notify", lk("staff", "STAFF@example.com", "customer", "jan.reply@example.com"), CodeSenderMismatch},
		{"notify", lk("staff", "Staff <STAFF@example.com>", "customer", "Jan <jan@example.com>", "text", "b"), ""},
		{"notify", lk("staff", "staff@example.com", "customer", "jan@example.com", "text", "c"), CodeMaxCalls},
	}
	s2 := d.Session(msg, policyScenario(t), "key-2")
	refusals := []struct {
		args map[string]any
		code agent.ErrorCode
	}{
		{lk("order_id", "ORD-7"), CodeNotInMessage},                   // a substring of a token
		{lk("order_id", "99999"), CodeNotInMessage},                   // only in the quoted history
		{lk("order_id", "nie dotarło Dzień"), CodeNotInMessage},       // across subject and text
		{lk("order_id", "numer zamówienia: ORD-77"), CodeInvalidArgs}, // max_length 20
		{lk("order_id", "ORD-77", "lang", "de"), CodeInvalidArgs},
		{lk("order_id", "ORD-77", "code", "AB-1234"), CodeInvalidArgs}, // pattern matches the whole value
		{lk("order_id", "ORD-77", "code", "ab-123"), CodeInvalidArgs},
		{lk("order_id", "2026-0042 nie", "lang", "pl", "code", "AB-123"), ""},
	}
	ctx := context.Background()
	for i, st := range steps {
		s.Call(ctx, st.name, st.args)
		r := s.Records()[i]
		got := agent.ErrorCode("")
		switch {
		case r.Repeated:
			got = "repeated"
		case r.Error != nil:
			got = r.Error.Code
		}
		if got != st.want || (st.want != "" && st.want != "repeated" && !r.Blocked) {
			t.Errorf("step %d %s%v: got %q (blocked %v), want %q", i, st.name, st.args, got, r.Blocked, st.want)
		}
	}
	for i, st := range refusals {
		env := s2.Call(ctx, "lookup", st.args).Envelope()
		code := ""
		if e, ok := env["error"].(map[string]any); ok {
			code = e["code"].(string)
		}
		if code != string(st.code) {
			t.Errorf("refusal %d %v: code %q, want %q (%v)", i, st.args, code, st.code, env)
		}
	}
	if diff := cmp.Diff([]string{"lookup", "lookup", "notify", "notify", "lookup"}, f.calls); diff != "" {
		t.Errorf("routed (-want +got):\n%s", diff)
	}
}

// Calls over the per-turn and per-email caps have no effect, are answered
// with an error and recorded blocked; the caps are configurable.
func TestCallCaps(t *testing.T) {
	f := &fakeRoutes{}
	d, err := New(Config{Tools: parseTools(t, policyTools), Routes: f.routes(FuncSendEmail, "lookup", "notify"),
		MaxCallsPerTurn: 3, MaxCallsPerEmail: 5})
	if err != nil {
		t.Fatal(err)
	}
	msg := testMessage()
	msg.Text = "zamówienie ORD-77"
	s := d.Session(msg, policyScenario(t), "k")
	ctx := context.Background()
	var codes []string
	for turn := 0; turn < 3; turn++ {
		s.StartTurn()
		for range 4 {
			env := s.Call(ctx, "unknown_fn", map[string]any{}).Envelope() // refused calls count too
			codes = append(codes, env["error"].(map[string]any)["code"].(string))
		}
	}
	u, c := string(CodeUnknownFunction), string(CodeTooManyCalls)
	if diff := cmp.Diff([]string{u, u, u, c, u, u, c, c, c, c, c, c}, codes); diff != "" {
		t.Errorf("codes (-want +got):\n%s", diff)
	}
	for _, r := range s.Records() {
		if !r.Blocked {
			t.Errorf("record %+v not blocked", r)
		}
	}
	if len(f.calls) != 0 {
		t.Errorf("routed %v", f.calls)
	}
}

// Results of any tool are size-capped before they go back to the model.
func TestResultCap(t *testing.T) {
	long := strings.Repeat("ż", 5000) // 10,000 bytes
	tests := []struct {
		name   string
		result map[string]any
		check  func(t *testing.T, got map[string]any)
	}{
		{"small stays", map[string]any{"text": "short"}, func(t *testing.T, got map[string]any) {
			if got["text"] != "short" {
				t.Errorf("got %v", got)
			}
		}},
		{"long string cut", map[string]any{"title": "Manual", "content": []any{map[string]any{"text": long}}}, func(t *testing.T, got map[string]any) {
			text := got["content"].([]any)[0].(map[string]any)["text"].(string)
			if !strings.HasSuffix(text, truncMark) || got["title"] != "Manual" || !strings.HasPrefix(text, "żż") {
				t.Errorf("got %.80q…", text)
			}
		}},
		{"many small values", func() map[string]any {
			m := map[string]any{}
			for i := range 2000 {
				m[strings.Repeat("k", 8)+string(rune('a'+i%26))+strings.Repeat("x", i%50)] = i
			}
			return m
		}(), func(t *testing.T, got map[string]any) {
			if got["truncated"] != true || got["preview"] == "" {
				t.Errorf("got keys %v", len(got))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := parseTools(t, policyTools)
			d, err := New(Config{Tools: ts, MaxResultBytes: 2048, Routes: map[string]Func{
				FuncSendEmail: nil, "notify": nil,
				"lookup": Untyped(func(context.Context, *Call) (map[string]any, error) { return tt.result, nil }),
			}})
			if err == nil {
				t.Fatal("nil routes accepted")
			}
			d, err = New(Config{Tools: ts, MaxResultBytes: 2048, Routes: policyRoutes(
				Untyped(func(context.Context, *Call) (map[string]any, error) { return tt.result, nil }))})
			if err != nil {
				t.Fatal(err)
			}
			msg := testMessage()
			msg.Text = "ORD-77"
			s := d.Session(msg, policyScenario(t), "k")
			env := s.Call(context.Background(), "lookup", map[string]any{"order_id": "ORD-77"}).Envelope()
			got := env["result"].(map[string]any)
			b, _ := json.Marshal(got)
			if len(b) > 2048 {
				t.Errorf("result is %d bytes, cap 2048", len(b))
			}
			tt.check(t, got)
			rec := s.Records()[0]
			if diff := cmp.Diff(got, rec.Result, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("recorded result differs from the model's (-model +record):\n%s", diff)
			}
		})
	}
}
