package dispatcher

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage/internal/agent"
	"triage/internal/instructions"
	"triage/internal/message"
	"triage/internal/testkit/toolstest"
)

// parseTools loads a tools.yaml given inline.
func parseTools(t testing.TB, yml string) *instructions.Tools {
	t.Helper()
	ts, err := instructions.ParseTools("tools.yaml", []byte(yml), instructions.ToolsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// turn marks the start of the next model turn in a list of steps.
var turn = step{name: "--turn--"}

var (
	fn           = toolstest.Function
	obj          = toolstest.Object
	testScenario = toolstest.Scenario
	testMessage  = toolstest.Message
	str          = map[string]any{"type": "string"}
)

// fakeRoutes records every routed call (its name, and the arguments the
// tool actually received) and answers from results/errs.
type fakeRoutes struct {
	mu      sync.Mutex
	calls   []string
	args    []map[string]any
	errs    map[string]error
	results map[string]map[string]any
	panic   map[string]bool
}

func (f *fakeRoutes) routes(names ...string) map[string]Func {
	m := map[string]Func{}
	for _, n := range names {
		m[n] = Untyped(func(ctx context.Context, c *Call) (map[string]any, error) {
			f.mu.Lock()
			f.calls = append(f.calls, c.Name)
			f.args = append(f.args, c.Args)
			err := f.errs[c.Name]
			p := f.panic[c.Name]
			f.mu.Unlock()
			if p {
				panic("boom")
			}
			if err != nil {
				return nil, err
			}
			if r, ok := f.results[c.Name]; ok {
				return r, nil
			}
			return map[string]any{"routed": c.Name, "key": string(c.Key), "status": "valid"}, nil
		})
	}
	return m
}

// stepClock advances 5ms per reading, so every call lasts 5ms.
func stepClock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(5 * time.Millisecond)
		return t
	}
}

type tempErr struct{}

func (tempErr) Error() string   { return "backend busy" }
func (tempErr) Temporary() bool { return true }

type step struct {
	name string
	args map[string]any
}

func email(to, subject, body string) step {
	return step{FuncSendEmail, map[string]any{"to": to, "subject": subject, "body": body}}
}

func ok(name string, args map[string]any) Record {
	return Record{Name: name, Args: args, OK: true, Result: map[string]any{"routed": name, "key": "key-1", "status": "valid"}, DurationMS: 5}
}

func repeated(name string, args map[string]any) Record {
	r := ok(name, args)
	r.Repeated = true
	return r
}

func refused(name string, args map[string]any, code agent.ErrorCode) Record {
	return Record{Name: name, Args: args, Error: &agent.ToolError{Code: code}, Blocked: true, DurationMS: 5}
}

func failed(name string, args map[string]any, code agent.ErrorCode) Record {
	return Record{Name: name, Args: args, Error: &agent.ToolError{Code: code}, DurationMS: 5}
}

func TestSessionCall(t *testing.T) {
	cw := func(sn string) map[string]any { return map[string]any{"serial_number": sn} }
	ct := func(sn, email string) map[string]any {
		return map[string]any{"serial_number": sn, "customer_email": email, "priority": "normal"}
	}
	mailArgs := func(s step) map[string]any { return s.args }
	good := email("jan.reply@example.com", "Re: Reklamacja", "Dzień dobry,\nsprawdziliśmy.")

	tests := []struct {
		name    string
		msg     func(m *message.Message)
		errs    map[string]error
		results map[string]map[string]any // route results (default: routed + key)
		panics  map[string]bool
		steps   []step
		want    []Record
		msgHas  []string // per record, a substring of the error message ("" = no check)
		routed  []string
	}{
		{
			name:   "valid calls are routed",
			steps:  []step{{FuncCheckWarranty, cw("SN-48213-PL")}, turn, {FuncCreateTicket, ct("sn48213pl", "JAN@example.com")}, good},
			want:   []Record{ok(FuncCheckWarranty, cw("SN-48213-PL")), ok(FuncCreateTicket, ct("sn48213pl", "JAN@example.com")), ok(FuncSendEmail, mailArgs(good))},
			routed: []string{FuncCheckWarranty, FuncCreateTicket, FuncSendEmail},
		},
		{
			name:   "unknown function",
			steps:  []step{{"delete_everything", map[string]any{}}},
			want:   []Record{refused("delete_everything", map[string]any{}, CodeUnknownFunction)},
			msgHas: []string{"delete_everything"},
		},
		{
			name: "schema: missing, wrong type, extra property, enum",
			steps: []step{
				{FuncCheckWarranty, map[string]any{}},
				{FuncCheckWarranty, map[string]any{"serial_number": 48213.0}},
				{FuncCheckWarranty, map[string]any{"serial_number": "SN-48213-PL", "x": true}},
				{FuncCreateTicket, map[string]any{"serial_number": "SN-48213-PL", "customer_email": "jan@example.com", "priority": "urgent"}},
				email("jan.reply@example.com", "Re: x", ""),
			},
			want: []Record{
				refused(FuncCheckWarranty, map[string]any{}, CodeInvalidArgs),
				refused(FuncCheckWarranty, map[string]any{"serial_number": 48213.0}, CodeInvalidArgs),
				refused(FuncCheckWarranty, map[string]any{"serial_number": "SN-48213-PL", "x": true}, CodeInvalidArgs),
				refused(FuncCreateTicket, map[string]any{"serial_number": "SN-48213-PL", "customer_email": "jan@example.com", "priority": "urgent"}, CodeInvalidArgs),
				refused(FuncSendEmail, mailArgs(email("jan.reply@example.com", "Re: x", "")), CodeInvalidArgs),
			},
			msgHas: []string{"missing property 'serial_number'", "at '/serial_number'", "'x'", "at '/priority'", "at '/body'"},
		},
		{
			// from: serials accepts an extracted serial (normalized), never a
			// word or a substring of one.
			name: "from serials: an extracted serial, not a word or a substring",
			steps: []step{
				{FuncCheckWarranty, cw("SN99999")},
				{FuncCheckWarranty, cw("ABC123456")},
				{FuncCheckWarranty, cw("xy 777")},
				{FuncCheckWarranty, cw(" - ")},
				{FuncCheckWarranty, cw("SN")},
				{FuncCheckWarranty, cw("LAPTOP")},
				{FuncCheckWarranty, cw("Prosze")},
				{FuncCheckWarranty, cw("4821")},
				{FuncCheckWarranty, cw("48213")},
				{FuncCreateTicket, ct("SN-00000", "jan@example.com")},
			},
			want: []Record{
				refused(FuncCheckWarranty, cw("SN99999"), CodeSerialNotInMessage),
				ok(FuncCheckWarranty, cw("ABC123456")),
				ok(FuncCheckWarranty, cw("xy 777")),
				refused(FuncCheckWarranty, cw(" - "), CodeSerialNotInMessage),
				refused(FuncCheckWarranty, cw("SN"), CodeSerialNotInMessage),
				refused(FuncCheckWarranty, cw("LAPTOP"), CodeSerialNotInMessage),
				refused(FuncCheckWarranty, cw("Prosze"), CodeSerialNotInMessage),
				refused(FuncCheckWarranty, cw("4821"), CodeSerialNotInMessage),
				refused(FuncCheckWarranty, cw("48213"), CodeSerialNotInMessage),
				refused(FuncCreateTicket, ct("SN-00000", "jan@example.com"), CodeSerialNotInMessage),
			},
			routed: []string{FuncCheckWarranty, FuncCheckWarranty},
		},
		{
			// from: sender accepts the From, not the Reply-To.
			name: "from sender: customer_email is the From address only",
			steps: []step{
				{FuncCheckWarranty, cw("SN-48213-PL")}, turn,
				{FuncCreateTicket, ct("SN-48213-PL", "mallory@evil.example")},
				{FuncCreateTicket, ct("SN-48213-PL", "jan@example.com, mallory@evil.example")},
				{FuncCreateTicket, ct("SN-48213-PL", "Jan <jan.reply@example.com>")},
				{FuncCreateTicket, ct("SN-48213-PL", "Jan <JAN@example.com>")},
			},
			want: []Record{
				ok(FuncCheckWarranty, cw("SN-48213-PL")),
				refused(FuncCreateTicket, ct("SN-48213-PL", "mallory@evil.example"), CodeSenderMismatch),
				refused(FuncCreateTicket, ct("SN-48213-PL", "jan@example.com, mallory@evil.example"), CodeSenderMismatch),
				refused(FuncCreateTicket, ct("SN-48213-PL", "Jan <jan.reply@example.com>"), CodeSenderMismatch),
				ok(FuncCreateTicket, ct("SN-48213-PL", "Jan <JAN@example.com>")),
			},
			routed: []string{FuncCheckWarranty, FuncCreateTicket},
		},
		{
			name: "from reply_to: the reply address only, never staff",
			steps: []step{
				email("jan@example.com", "Re", "text"), // From, but Reply-To differs
				email("mallory@evil.example", "Re", "text"),
				email("jan.reply@example.com, mallory@evil.example", "Re", "text"),
				email("jan.reply@example.com; mallory@evil.example", "Re", "text"),
				email("not an address", "Re", "text"),
				email("staff@example.com", "Re", "text"), // a configured staff address
				email(`"Kowalski, Jan" <JAN.Reply@Example.com>`, "Re", "text"),
			},
			want: []Record{
				refused(FuncSendEmail, mailArgs(email("jan@example.com", "Re", "text")), CodeRecipientNotAllowed),
				refused(FuncSendEmail, mailArgs(email("mallory@evil.example", "Re", "text")), CodeRecipientNotAllowed),
				refused(FuncSendEmail, mailArgs(email("jan.reply@example.com, mallory@evil.example", "Re", "text")), CodeRecipientNotAllowed),
				refused(FuncSendEmail, mailArgs(email("jan.reply@example.com; mallory@evil.example", "Re", "text")), CodeRecipientNotAllowed),
				refused(FuncSendEmail, mailArgs(email("not an address", "Re", "text")), CodeRecipientNotAllowed),
				refused(FuncSendEmail, mailArgs(email("staff@example.com", "Re", "text")), CodeRecipientNotAllowed),
				ok(FuncSendEmail, mailArgs(email(`"Kowalski, Jan" <JAN.Reply@Example.com>`, "Re", "text"))),
			},
			routed: []string{FuncSendEmail},
		},
		{
			// requires, as declared in the shipped tools.yaml.
			name: "requires: a ticket only after a valid check of the same serial, in an earlier turn",
			steps: []step{
				{FuncCreateTicket, ct("SN-48213-PL", "jan@example.com")}, // no check yet
				{FuncCheckWarranty, cw("SN-48213-PL")},
				{FuncCreateTicket, ct("SN-48213-PL", "jan@example.com")}, // same turn as the check
				turn,
				{FuncCreateTicket, ct("ABC123456", "jan@example.com")}, // another serial
				{FuncCreateTicket, ct("sn 48213 pl", "jan@example.com")},
			},
			want: []Record{
				refused(FuncCreateTicket, ct("SN-48213-PL", "jan@example.com"), CodeRequirementNotMet),
				ok(FuncCheckWarranty, cw("SN-48213-PL")),
				refused(FuncCreateTicket, ct("SN-48213-PL", "jan@example.com"), CodeRequirementNotMet),
				refused(FuncCreateTicket, ct("ABC123456", "jan@example.com"), CodeRequirementNotMet),
				ok(FuncCreateTicket, ct("sn 48213 pl", "jan@example.com")),
			},
			msgHas: []string{"only after check_warranty", "", "earlier turn", "same serial_number"},
			routed: []string{FuncCheckWarranty, FuncCreateTicket},
		},
		{
			name:    "requires: refused for an expired serial",
			results: map[string]map[string]any{FuncCheckWarranty: {"status": "expired"}},
			steps:   []step{{FuncCheckWarranty, cw("SN-48213-PL")}, turn, {FuncCreateTicket, ct("SN-48213-PL", "jan@example.com")}},
			want: []Record{
				{Name: FuncCheckWarranty, Args: cw("SN-48213-PL"), OK: true, Result: map[string]any{"status": "expired"}, DurationMS: 5},
				refused(FuncCreateTicket, ct("SN-48213-PL", "jan@example.com"), CodeRequirementNotMet),
			},
			msgHas: []string{"", `one of {"status":"valid"}, {"decision":{"basis":"statutory"}}`},
			routed: []string{FuncCheckWarranty},
		},
		{
			// An expired guarantee the seller's statutory liability still
			// covers: the repair is owed, so a ticket may open.
			name:    "requires: a ticket for an expired serial on a statutory decision",
			results: map[string]map[string]any{FuncCheckWarranty: {"status": "expired", "decision": map[string]any{"basis": "statutory"}}},
			steps:   []step{{FuncCheckWarranty, cw("SN-48213-PL")}, turn, {FuncCreateTicket, ct("SN-48213-PL", "jan@example.com")}},
			want: []Record{
				{Name: FuncCheckWarranty, Args: cw("SN-48213-PL"), OK: true, Result: map[string]any{"status": "expired", "decision": map[string]any{"basis": "statutory"}}, DurationMS: 5},
				ok(FuncCreateTicket, ct("SN-48213-PL", "jan@example.com")),
			},
			routed: []string{FuncCheckWarranty, FuncCreateTicket},
		},
		{
			name:    "requires: no ticket for an expired serial on a decision without statutory liability",
			results: map[string]map[string]any{FuncCheckWarranty: {"status": "expired", "decision": map[string]any{"basis": "none"}}},
			steps:   []step{{FuncCheckWarranty, cw("SN-48213-PL")}, turn, {FuncCreateTicket, ct("SN-48213-PL", "jan@example.com")}},
			want: []Record{
				{Name: FuncCheckWarranty, Args: cw("SN-48213-PL"), OK: true, Result: map[string]any{"status": "expired", "decision": map[string]any{"basis": "none"}}, DurationMS: 5},
				refused(FuncCreateTicket, ct("SN-48213-PL", "jan@example.com"), CodeRequirementNotMet),
			},
			routed: []string{FuncCheckWarranty},
		},
		{
			// An effect runs once; the same call again
			// returns the first result without running.
			name:   "effect: once per email, the same call repeated returns the first result",
			steps:  []step{good, good, email("jan.reply@example.com", "Re: 2", "again")},
			want:   []Record{ok(FuncSendEmail, mailArgs(good)), repeated(FuncSendEmail, mailArgs(good)), refused(FuncSendEmail, mailArgs(email("jan.reply@example.com", "Re: 2", "again")), CodeMaxCalls)},
			routed: []string{FuncSendEmail},
		},
		{
			name:   "a failed send does not use up the reply",
			errs:   map[string]error{FuncSendEmail: tempErr{}},
			steps:  []step{good, good},
			want:   []Record{failed(FuncSendEmail, mailArgs(good), CodeUnavailable), failed(FuncSendEmail, mailArgs(good), CodeUnavailable)},
			routed: []string{FuncSendEmail, FuncSendEmail},
		},
		{
			name:   "pattern and max_length: subject is one line",
			steps:  []step{email("jan.reply@example.com", "Re\r\nBcc: mallory@evil.example", "text"), email("jan.reply@example.com", strings.Repeat("ą", 1025), "text")},
			want:   []Record{refused(FuncSendEmail, mailArgs(email("jan.reply@example.com", "Re\r\nBcc: mallory@evil.example", "text")), CodeInvalidArgs), refused(FuncSendEmail, mailArgs(email("jan.reply@example.com", strings.Repeat("ą", 1025), "text")), CodeInvalidArgs)},
			msgHas: []string{"pattern", "1025 characters"},
		},
		{
			name:   "a route's refusal is recorded blocked",
			errs:   map[string]error{FuncSendEmail: &Error{Code: CodeBodyNotPlainText, Message: "html", Refused: true}},
			steps:  []step{good},
			want:   []Record{refused(FuncSendEmail, mailArgs(good), CodeBodyNotPlainText)},
			routed: []string{FuncSendEmail},
		},
		{
			name: "route errors are classified",
			errs: map[string]error{
				FuncCheckWarranty: fmt.Errorf("wrapped: %w", &Error{Code: "not_allowed_here", Message: "nope"}),
				FuncSendEmail:     fmt.Errorf("smtp: %w", tempErr{}),
			},
			steps: []step{{FuncCheckWarranty, cw("SN-48213-PL")}, good},
			want: []Record{
				failed(FuncCheckWarranty, cw("SN-48213-PL"), "not_allowed_here"),
				failed(FuncSendEmail, mailArgs(good), CodeUnavailable),
			},
			msgHas: []string{"nope", "backend busy"},
			routed: []string{FuncCheckWarranty, FuncSendEmail},
		},
		{
			name:   "a plain route error is client_error",
			errs:   map[string]error{FuncCheckWarranty: errors.New("disk on fire")},
			steps:  []step{{FuncCheckWarranty, cw("SN-48213-PL")}},
			want:   []Record{failed(FuncCheckWarranty, cw("SN-48213-PL"), CodeClientError)},
			msgHas: []string{"disk on fire"},
			routed: []string{FuncCheckWarranty},
		},
		{
			name:   "a panicking route is internal",
			panics: map[string]bool{FuncCheckWarranty: true},
			steps:  []step{{FuncCheckWarranty, cw("SN-48213-PL")}},
			want:   []Record{failed(FuncCheckWarranty, cw("SN-48213-PL"), CodeInternal)},
			msgHas: []string{"boom"},
			routed: []string{FuncCheckWarranty},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeRoutes{errs: tt.errs, panic: tt.panics, results: tt.results}
			d, err := New(Config{
				Tools:           toolstest.Shipped(t),
				Routes:          f.routes(FuncCheckWarranty, FuncCreateTicket, FuncSendEmail, FuncNotifyStaff),
				StaffAddresses:  []string{"Staff <staff@example.com>"},
				MaxCallsPerTurn: 50, // the caps have their own test
				Now:             stepClock(),
			})
			if err != nil {
				t.Fatal(err)
			}
			msg := testMessage()
			if tt.msg != nil {
				tt.msg(msg)
			}
			s := d.Session(msg, testScenario(t, false), "key-1")
			for i, st := range tt.steps {
				if st.name == turn.name {
					s.StartTurn()
					continue
				}
				env := s.Call(context.Background(), st.name, st.args).Envelope()
				recs := s.Records()
				rec := recs[len(recs)-1]
				wantEnv := map[string]any{"ok": true, "result": rec.Result}
				if !rec.OK {
					wantEnv = map[string]any{"ok": false, "error": map[string]any{"code": string(rec.Error.Code), "message": rec.Error.Message}}
				}
				if diff := cmp.Diff(wantEnv, env); diff != "" {
					t.Errorf("step %d envelope (-want +got):\n%s", i, diff)
				}
			}
			got := s.Records()
			for i := range got {
				if got[i].Error == nil {
					continue
				}
				if got[i].Error.Message == "" {
					t.Errorf("record %d: empty error message", i)
				}
				if i < len(tt.msgHas) && !strings.Contains(got[i].Error.Message, tt.msgHas[i]) {
					t.Errorf("record %d: message %q does not mention %q", i, got[i].Error.Message, tt.msgHas[i])
				}
				got[i].Error.Message = ""
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.routed, f.calls); diff != "" {
				t.Errorf("routed calls (-want +got):\n%s", diff)
			}
			wantSent := map[string]any(nil)
			for _, r := range tt.want {
				if r.Name == FuncSendEmail && r.OK {
					wantSent = r.Result
				}
			}
			if diff := cmp.Diff(wantSent, sentResult(s.Records())); diff != "" {
				t.Errorf("Sent (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSessionWithoutScenarioRefusesEverything(t *testing.T) {
	f := &fakeRoutes{}
	d, err := New(Config{Tools: toolstest.Shipped(t), Routes: f.routes(FuncCheckWarranty, FuncCreateTicket, FuncSendEmail, FuncNotifyStaff)})
	if err != nil {
		t.Fatal(err)
	}
	s := d.Session(testMessage(), nil, "k")
	env := s.Call(context.Background(), FuncCheckWarranty, map[string]any{"serial_number": "SN-48213-PL"}).Envelope()
	if got := env["error"].(map[string]any)["code"]; got != string(CodeUnknownFunction) {
		t.Errorf("code = %v, want %s", got, CodeUnknownFunction)
	}
	if len(f.calls) != 0 {
		t.Errorf("routed %v", f.calls)
	}
}

func TestRecordsAreCopies(t *testing.T) {
	f := &fakeRoutes{}
	d, _ := New(Config{Tools: toolstest.Shipped(t), Routes: f.routes(FuncCheckWarranty, FuncCreateTicket, FuncSendEmail, FuncNotifyStaff)})
	s := d.Session(testMessage(), testScenario(t, false), "key-1")
	args := map[string]any{"serial_number": "SN-48213-PL"}
	s.Call(context.Background(), FuncCheckWarranty, args)
	args["serial_number"] = "changed"
	recs := s.Records()
	recs[0].Name = "mutated"
	got := s.Records()[0]
	if got.Name != FuncCheckWarranty || got.Args["serial_number"] != "SN-48213-PL" {
		t.Errorf("record changed through a copy: %+v", got)
	}
}

func TestConcurrentSendsOnlyOneReply(t *testing.T) {
	f := &fakeRoutes{}
	d, _ := New(Config{Tools: toolstest.Shipped(t), Routes: f.routes(FuncCheckWarranty, FuncCreateTicket, FuncSendEmail, FuncNotifyStaff), MaxCallsPerTurn: 100, MaxCallsPerEmail: 100})
	s := d.Session(testMessage(), testScenario(t, false), "key-1")
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Call(context.Background(), FuncSendEmail, map[string]any{"to": "jan.reply@example.com", "subject": "Re", "body": fmt.Sprint("ok ", i)})
		}()
	}
	wg.Wait()
	var sent, blocked int
	for _, r := range s.Records() {
		if r.OK {
			sent++
		}
		if r.Blocked && r.Error.Code == CodeMaxCalls {
			blocked++
		}
	}
	if sent != 1 || blocked != 15 || len(f.calls) != 1 {
		t.Errorf("sent=%d blocked=%d routed=%d, want 1, 15, 1", sent, blocked, len(f.calls))
	}
}

func TestNew(t *testing.T) {
	f := &fakeRoutes{}
	ts := parseTools(t, `
tools:
  a: {builtin: check_warranty}
  b: {http: {method: POST, url: "http://127.0.0.1:1/x"}}
`)
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"no tools", Config{}, "Tools is required"},
		{"a binding without an implementation", Config{Tools: ts, Routes: f.routes("a")}, "b: no implementation for http POST"},
		{"a route without a binding", Config{Tools: ts, Routes: f.routes("a", "b", "c")}, `route "c" has no binding`},
		{"bad staff", Config{Tools: ts, Routes: f.routes("a", "b"), StaffAddresses: []string{"a@b, c@d"}}, "StaffAddresses[0]"},
		{"negative cap", Config{Tools: ts, Routes: f.routes("a", "b"), MaxBodyBytes: -1}, "negative"},
		{"negative call cap", Config{Tools: ts, Routes: f.routes("a", "b"), MaxCallsPerTurn: -1}, "negative"},
		{"builtin from Builtins", Config{Tools: ts, Builtins: f.routes("check_warranty"), Routes: f.routes("b")}, ""},
		{"ok", Config{Tools: ts, Routes: f.routes("b", "a")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := New(tt.cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "dispatcher: ") {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"a", "b"}, d.Names()); diff != "" {
				t.Errorf("Names (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEscalation: staff are reached through notify_staff only (it has no
// recipient argument), send_email never goes to staff, and in a scenario
// declared escalate: true the customer's reply waits for notify_staff.
func TestEscalation(t *testing.T) {
	good := map[string]any{"to": "jan.reply@example.com", "subject": "Re: Reklamacja", "body": "Przekazaliśmy sprawę."}
	notify := func(subject, body string) map[string]any { return map[string]any{"subject": subject, "body": body} }
	tests := []struct {
		name   string
		staff  []string
		steps  []step
		want   []string
		routed []string
	}{
		{
			name:  "send_email never to staff, and only after notify_staff",
			staff: []string{"Staff <staff@example.com>"},
			steps: []step{
				{FuncSendEmail, map[string]any{"to": "Staff <STAFF@example.com>", "subject": "Eskalacja", "body": "Pomocy."}},
				{FuncSendEmail, good},
				{FuncNotifyStaff, notify("two\nlines", "x")},
				{FuncNotifyStaff, map[string]any{"subject": "s", "body": "b", "to": "mallory@evil.example"}},
				{FuncNotifyStaff, notify("Klient prosi o kontakt", "Klient chce rozmawiać z człowiekiem.")},
				{FuncNotifyStaff, notify("Again", "twice")},
				turn,
				{FuncSendEmail, good},
			},
			want: []string{
				"send_email blocked recipient_not_allowed",
				"send_email blocked requirement_not_met",
				"notify_staff blocked invalid_args",
				"notify_staff blocked invalid_args",
				"notify_staff ok",
				"notify_staff blocked max_calls_reached",
				"send_email ok",
			},
			routed: []string{FuncNotifyStaff, FuncSendEmail},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeRoutes{}
			d, err := New(Config{
				Tools:           toolstest.Shipped(t),
				Routes:          f.routes(FuncCheckWarranty, FuncCreateTicket, FuncSendEmail, FuncNotifyStaff),
				StaffAddresses:  tt.staff,
				MaxCallsPerTurn: 50,
			})
			if err != nil {
				t.Fatal(err)
			}
			s := d.Session(testMessage(), testScenario(t, true), "key-1")
			for _, st := range tt.steps {
				if st.name == turn.name {
					s.StartTurn()
					continue
				}
				s.Call(context.Background(), st.name, st.args)
			}
			var got []string
			for _, r := range s.Records() {
				switch {
				case r.OK:
					got = append(got, r.Name+" ok")
				case r.Blocked:
					got = append(got, r.Name+" blocked "+string(r.Error.Code))
				default:
					got = append(got, r.Name+" error "+string(r.Error.Code))
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.routed, f.calls); diff != "" {
				t.Errorf("routed (-want +got):\n%s", diff)
			}
		})
	}
}

// sentResult is the result of the first successful send_email, or nil.
func sentResult(recs []Record) map[string]any {
	for _, r := range recs {
		if r.Name == FuncSendEmail && r.OK {
			return r.Result
		}
	}
	return nil
}
