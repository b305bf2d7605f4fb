package dispatcher

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"triage/internal/message"
	"triage/internal/scenario"
)

// compile compiles a JSON Schema given as a Go value, like scenario.Load does.
func compile(t testing.TB, name string, params map[string]any) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	url := "mem:///" + name + ".json"
	if err := c.AddResource(url, params); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func fn(t testing.TB, name string, params map[string]any) scenario.Function {
	return scenario.Function{Name: name, Description: name, Parameters: params, Schema: compile(t, name, params)}
}

func obj(required []any, props map[string]any) map[string]any {
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

var str = map[string]any{"type": "string"}

func testScenario(t testing.TB, escalate bool, extra ...scenario.Function) *scenario.Scenario {
	fns := []scenario.Function{
		fn(t, FuncCheckWarranty, obj([]any{"serial_number"}, map[string]any{"serial_number": str})),
		fn(t, FuncCreateTicket, obj([]any{"serial_number", "customer_email", "priority"}, map[string]any{
			"serial_number":  str,
			"customer_email": str,
			"priority":       map[string]any{"type": "string", "enum": []any{"low", "normal", "high"}},
		})),
		fn(t, FuncSendEmail, obj([]any{"to", "subject", "body"}, map[string]any{
			"to": str, "subject": str, "body": map[string]any{"type": "string", "minLength": 1},
		})),
	}
	return &scenario.Scenario{Name: "test", Functions: append(fns, extra...), Escalate: escalate, Body: "x"}
}

func testMessage() *message.Message {
	return &message.Message{
		MessageID: "<in-1@example.com>",
		From:      mail.Address{Name: "Jan Kowalski", Address: "jan@example.com"},
		ReplyTo:   "jan.reply@example.com",
		Subject:   "Reklamacja SN-48213-PL",
		Text:      "Dzień dobry, mój numer seryjny to s/n abc.123456.\n",
		Quoted:    "> old serial XY-777",
	}
}

// fakeRoutes records every routed call and answers from results/errs.
type fakeRoutes struct {
	mu    sync.Mutex
	calls []string
	errs  map[string]error
	panic map[string]bool
}

func (f *fakeRoutes) routes(names ...string) map[string]Func {
	m := map[string]Func{}
	for _, n := range names {
		m[n] = func(ctx context.Context, c *Call) (map[string]any, error) {
			f.mu.Lock()
			f.calls = append(f.calls, c.Name)
			err := f.errs[c.Name]
			p := f.panic[c.Name]
			f.mu.Unlock()
			if p {
				panic("boom")
			}
			if err != nil {
				return nil, err
			}
			return map[string]any{"routed": c.Name, "key": c.Key}, nil
		}
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
	return Record{Name: name, Args: args, OK: true, Result: map[string]any{"routed": name, "key": "key-1"}, DurationMS: 5}
}

func refused(name string, args map[string]any, code string) Record {
	return Record{Name: name, Args: args, Error: &RecordError{Code: code}, Blocked: true, DurationMS: 5}
}

func failed(name string, args map[string]any, code string) Record {
	return Record{Name: name, Args: args, Error: &RecordError{Code: code}, DurationMS: 5}
}

func TestSessionCall(t *testing.T) {
	cw := func(sn string) map[string]any { return map[string]any{"serial_number": sn} }
	ct := func(sn, email string) map[string]any {
		return map[string]any{"serial_number": sn, "customer_email": email, "priority": "normal"}
	}
	mailArgs := func(s step) map[string]any { return s.args }
	good := email("jan.reply@example.com", "Re: Reklamacja", "Dzień dobry,\nsprawdziliśmy.")

	tests := []struct {
		name     string
		escalate bool
		msg      func(m *message.Message)
		routes   []string // default: all three
		errs     map[string]error
		panics   map[string]bool
		steps    []step
		want     []Record
		msgHas   []string // per record, a substring of the error message ("" = no check)
		routed   []string
	}{
		{
			name:   "valid calls are routed",
			steps:  []step{{FuncCheckWarranty, cw("SN-48213-PL")}, {FuncCreateTicket, ct("sn48213pl", "JAN@example.com")}, good},
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
			name:   "declared function without a route is internal",
			routes: []string{FuncSendEmail},
			steps:  []step{{FuncCheckWarranty, cw("SN-48213-PL")}},
			want:   []Record{refused(FuncCheckWarranty, cw("SN-48213-PL"), CodeInternal)},
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
			name: "serial must occur in the message (normalized, quoted included)",
			steps: []step{
				{FuncCheckWarranty, cw("SN99999")},
				{FuncCheckWarranty, cw("ABC123456")},
				{FuncCheckWarranty, cw("xy 777")},
				{FuncCheckWarranty, cw(" - ")},
				{FuncCheckWarranty, cw("SN")},
				{FuncCreateTicket, ct("SN-00000", "jan@example.com")},
			},
			want: []Record{
				refused(FuncCheckWarranty, cw("SN99999"), CodeSerialNotInMessage),
				ok(FuncCheckWarranty, cw("ABC123456")),
				ok(FuncCheckWarranty, cw("xy 777")),
				refused(FuncCheckWarranty, cw(" - "), CodeInvalidArgs),
				refused(FuncCheckWarranty, cw("SN"), CodeInvalidArgs),
				refused(FuncCreateTicket, ct("SN-00000", "jan@example.com"), CodeSerialNotInMessage),
			},
			routed: []string{FuncCheckWarranty, FuncCheckWarranty},
		},
		{
			name: "customer_email must be the sender or reply address",
			steps: []step{
				{FuncCreateTicket, ct("SN-48213-PL", "mallory@evil.example")},
				{FuncCreateTicket, ct("SN-48213-PL", "jan@example.com, mallory@evil.example")},
				{FuncCreateTicket, ct("SN-48213-PL", "Jan <jan.reply@example.com>")},
			},
			want: []Record{
				refused(FuncCreateTicket, ct("SN-48213-PL", "mallory@evil.example"), CodeCustomerMismatch),
				refused(FuncCreateTicket, ct("SN-48213-PL", "jan@example.com, mallory@evil.example"), CodeCustomerMismatch),
				ok(FuncCreateTicket, ct("SN-48213-PL", "Jan <jan.reply@example.com>")),
			},
			routed: []string{FuncCreateTicket},
		},
		{
			name: "recipient must be the reply address",
			steps: []step{
				email("jan@example.com", "Re", "text"), // From, but Reply-To differs
				email("mallory@evil.example", "Re", "text"),
				email("jan.reply@example.com, mallory@evil.example", "Re", "text"),
				email("jan.reply@example.com; mallory@evil.example", "Re", "text"),
				email("not an address", "Re", "text"),
				email("staff@example.com", "Re", "text"), // staff, but no escalation
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
			name:     "escalating scenario may mail staff",
			escalate: true,
			steps:    []step{email("Support Team <STAFF@example.com>", "Eskalacja", "Proszę o pomoc.")},
			want:     []Record{ok(FuncSendEmail, mailArgs(email("Support Team <STAFF@example.com>", "Eskalacja", "Proszę o pomoc.")))},
			routed:   []string{FuncSendEmail},
		},
		{
			name:   "one reply per email",
			steps:  []step{good, good, email("jan.reply@example.com", "Re: 2", "again")},
			want:   []Record{ok(FuncSendEmail, mailArgs(good)), refused(FuncSendEmail, mailArgs(good), CodeReplyAlreadySent), refused(FuncSendEmail, mailArgs(email("jan.reply@example.com", "Re: 2", "again")), CodeReplyAlreadySent)},
			routed: []string{FuncSendEmail},
		},
		{
			name:   "a failed send does not use up the reply",
			errs:   map[string]error{FuncSendEmail: tempErr{}},
			steps:  []step{good},
			want:   []Record{failed(FuncSendEmail, mailArgs(good), CodeUnavailable)},
			routed: []string{FuncSendEmail},
		},
		{
			name: "body: html, size, subject newline",
			steps: []step{
				email("jan.reply@example.com", "Re", "<p>Hello</p>"),
				email("jan.reply@example.com", "Re", "Hi<BR>there"),
				email("jan.reply@example.com", "Re", "see <a href=\"http://x\">here</a>"),
				email("jan.reply@example.com", "Re", strings.Repeat("a", 101)),
				email("jan.reply@example.com", "Re\r\nBcc: mallory@evil.example", "text"),
				email("jan.reply@example.com", "Re", strings.Repeat("ą", 50)), // 100 bytes: at the cap
			},
			want: []Record{
				refused(FuncSendEmail, mailArgs(email("jan.reply@example.com", "Re", "<p>Hello</p>")), CodeBodyNotPlainText),
				refused(FuncSendEmail, mailArgs(email("jan.reply@example.com", "Re", "Hi<BR>there")), CodeBodyNotPlainText),
				refused(FuncSendEmail, mailArgs(email("jan.reply@example.com", "Re", "see <a href=\"http://x\">here</a>")), CodeBodyNotPlainText),
				refused(FuncSendEmail, mailArgs(email("jan.reply@example.com", "Re", strings.Repeat("a", 101))), CodeBodyTooLarge),
				refused(FuncSendEmail, mailArgs(email("jan.reply@example.com", "Re\r\nBcc: mallory@evil.example", "text")), CodeInvalidArgs),
				ok(FuncSendEmail, mailArgs(email("jan.reply@example.com", "Re", strings.Repeat("ą", 50)))),
			},
			routed: []string{FuncSendEmail},
		},
		{
			name: "route errors are classified",
			errs: map[string]error{
				FuncCheckWarranty: fmt.Errorf("wrapped: %w", &Error{Code: "not_allowed_here", Message: "nope"}),
				FuncCreateTicket:  errors.New("disk on fire"),
				FuncSendEmail:     fmt.Errorf("smtp: %w", tempErr{}),
			},
			steps: []step{{FuncCheckWarranty, cw("SN-48213-PL")}, {FuncCreateTicket, ct("SN-48213-PL", "jan@example.com")}, good},
			want: []Record{
				failed(FuncCheckWarranty, cw("SN-48213-PL"), "not_allowed_here"),
				failed(FuncCreateTicket, ct("SN-48213-PL", "jan@example.com"), CodeClientError),
				failed(FuncSendEmail, mailArgs(good), CodeUnavailable),
			},
			msgHas: []string{"nope", "disk on fire", "backend busy"},
			routed: []string{FuncCheckWarranty, FuncCreateTicket, FuncSendEmail},
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
			f := &fakeRoutes{errs: tt.errs, panic: tt.panics}
			names := tt.routes
			if names == nil {
				names = []string{FuncCheckWarranty, FuncCreateTicket, FuncSendEmail}
			}
			d, err := New(Config{
				Routes:         f.routes(names...),
				StaffAddresses: []string{"Staff <staff@example.com>"},
				MaxBodyBytes:   100,
				Now:            stepClock(),
			})
			if err != nil {
				t.Fatal(err)
			}
			msg := testMessage()
			if tt.msg != nil {
				tt.msg(msg)
			}
			s := d.Session(msg, testScenario(t, tt.escalate), "key-1")
			for i, st := range tt.steps {
				env := s.Call(context.Background(), st.name, st.args)
				rec := s.Records()[i]
				wantEnv := map[string]any{"ok": true, "result": rec.Result}
				if !rec.OK {
					wantEnv = map[string]any{"ok": false, "error": map[string]any{"code": rec.Error.Code, "message": rec.Error.Message}}
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
			if diff := cmp.Diff(wantSent, s.Sent()); diff != "" {
				t.Errorf("Sent (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSessionWithoutScenarioRefusesEverything(t *testing.T) {
	f := &fakeRoutes{}
	d, err := New(Config{Routes: f.routes(FuncCheckWarranty)})
	if err != nil {
		t.Fatal(err)
	}
	s := d.Session(testMessage(), nil, "k")
	env := s.Call(context.Background(), FuncCheckWarranty, map[string]any{"serial_number": "SN-48213-PL"})
	if got := env["error"].(map[string]any)["code"]; got != CodeUnknownFunction {
		t.Errorf("code = %v, want %s", got, CodeUnknownFunction)
	}
	if len(f.calls) != 0 {
		t.Errorf("routed %v", f.calls)
	}
}

func TestRecordsAreCopies(t *testing.T) {
	f := &fakeRoutes{}
	d, _ := New(Config{Routes: f.routes(FuncCheckWarranty, FuncCreateTicket, FuncSendEmail)})
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
	d, _ := New(Config{Routes: f.routes(FuncSendEmail)})
	s := d.Session(testMessage(), testScenario(t, false), "key-1")
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Call(context.Background(), FuncSendEmail, map[string]any{"to": "jan.reply@example.com", "subject": "Re", "body": "ok"})
		}()
	}
	wg.Wait()
	var sent, blocked int
	for _, r := range s.Records() {
		if r.OK {
			sent++
		}
		if r.Blocked && r.Error.Code == CodeReplyAlreadySent {
			blocked++
		}
	}
	if sent != 1 || blocked != 15 || len(f.calls) != 1 {
		t.Errorf("sent=%d blocked=%d routed=%d, want 1, 15, 1", sent, blocked, len(f.calls))
	}
}

func TestNew(t *testing.T) {
	f := &fakeRoutes{}
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"no routes", Config{}, "Routes is required"},
		{"bad staff", Config{Routes: f.routes("a"), StaffAddresses: []string{"a@b, c@d"}}, "StaffAddresses[0]"},
		{"negative cap", Config{Routes: f.routes("a"), MaxBodyBytes: -1}, "negative"},
		{"ok", Config{Routes: f.routes("b", "a")}, ""},
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
