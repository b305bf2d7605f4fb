package processor_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"triage"
	"triage/internal/agent"
	"triage/internal/clients/tickets"
	"triage/internal/dispatcher"
	"triage/internal/guard"
	"triage/internal/processor"
	"triage/internal/prompt"
	"triage/internal/replies"
	"triage/internal/testkit/toolstest"
)

// scripted is a Go-level agent.Model (no HTTP) that plays a fixed plan: it
// checks every serial in the facts, opens a ticket when one is valid, then
// sends the reply. Setting to/final changes what it does.
type scripted struct {
	calls atomic.Int64
	// to overrides send_email.to ("" uses reply_to from the facts).
	to string
	// textOnly ends with a text answer and never sends.
	textOnly bool
	// err fails every call.
	err error
	// block makes every call wait for its context to end (2 s at most),
	// recording the context's deadline in deadlines.
	block     bool
	mu        sync.Mutex
	deadlines []time.Time
	// skipNotify never calls notify_staff (a model that ignores the
	// escalation instructions).
	skipNotify bool
	// onlyNotify calls notify_staff and then ends without replying.
	onlyNotify bool
	// facts is the facts block of the last main-loop request.
	facts atomic.Pointer[prompt.Facts]
	// send names the reply function (default send_email).
	send string
}

func (s *scripted) GenerateContent(ctx context.Context, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	s.calls.Add(1)
	if s.block {
		dl, _ := ctx.Deadline()
		s.mu.Lock()
		s.deadlines = append(s.deadlines, dl)
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(2 * time.Second):
			return nil, errors.New("scripted: blocked call gave up")
		}
	}
	if s.err != nil {
		return nil, s.err
	}
	f, err := prompt.ParseFacts(contents[0].Parts[0].Text)
	if err != nil {
		return nil, err
	}
	done := map[string]map[string]any{}
	for _, c := range contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				done[p.FunctionResponse.Name] = p.FunctionResponse.Response
			}
		}
	}
	declared := map[string]bool{}
	for _, t := range cfg.Tools {
		for _, d := range t.FunctionDeclarations {
			declared[d.Name] = true
		}
	}
	call := func(name string, args map[string]any) *genai.GenerateContentResponse {
		return resp(&genai.Part{FunctionCall: &genai.FunctionCall{ID: "c-" + name, Name: name, Args: args}})
	}
	if len(declared) > 0 {
		s.facts.Store(&f)
	}
	switch {
	case s.textOnly:
		return resp(&genai.Part{Text: "I would rather not send anything."}), nil
	case declared["notify_staff"] && done["notify_staff"] == nil && !s.skipNotify:
		return call("notify_staff", map[string]any{"subject": "Klient prosi o kontakt", "body": "Klient prosi o rozmowę z człowiekiem."}), nil
	case s.onlyNotify:
		return resp(&genai.Part{Text: "Staff know; that is enough."}), nil
	case declared["check_warranty"] && done["check_warranty"] == nil && len(f.SerialNumbers) > 0:
		return call("check_warranty", map[string]any{"serial_number": f.SerialNumbers[0]}), nil
	case declared["create_ticket"] && done["create_ticket"] == nil && status(done["check_warranty"]) == "valid":
		return call("create_ticket", map[string]any{"serial_number": f.SerialNumbers[0], "customer_email": f.From, "priority": "normal"}), nil
	case done[s.sendName()] == nil:
		to := f.ReplyTo
		if s.to != "" {
			to = s.to
		}
		return call(s.sendName(), map[string]any{"to": to, "subject": "Re: " + f.Subject, "body": "Dzień dobry,\n\nodpowiedź.\n\nZespół serwisu gwarancyjnego"}), nil
	default:
		return resp(&genai.Part{Text: "Nie udało się wysłać odpowiedzi."}), nil
	}
}

func (s *scripted) sendName() string {
	if s.send != "" {
		return s.send
	}
	return "send_email"
}

func status(env map[string]any) string {
	r, _ := env["result"].(map[string]any)
	s, _ := r["status"].(string)
	return s
}

func resp(p ...*genai.Part) *genai.GenerateContentResponse {
	return &genai.GenerateContentResponse{
		Candidates:    []*genai.Candidate{{Content: &genai.Content{Role: "model", Parts: p}, FinishReason: genai.FinishReasonStop}},
		UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 10, CandidatesTokenCount: 2, TotalTokenCount: 12},
	}
}

type env struct {
	proc      *processor.Processor
	outbox    string
	ob        *replies.Outbox
	tickets   *tickets.SQLite
	ticketsDB string // the tickets SQLite file
}

// defaultStaff is the staff address of newEnv: follow-ups and the fallback
// scenario promise a person, so staff are told first.
var defaultStaff = []string{"kierownik@example.com"}

func newEnv(t testing.TB, m agent.Model, opts ...func(*agent.Config, *processor.Config)) *env {
	t.Helper()
	return newEnvFull(t, m, defaultStaff, nil, opts...)
}

// newEnvStaff is newEnv with staff addresses for notify_staff.
func newEnvStaff(t testing.TB, m agent.Model, staff []string) *env {
	t.Helper()
	return newEnvFull(t, m, staff, nil)
}

// newEnvWithStore is newEnv with another conversation store.
func newEnvWithStore(t testing.TB, m agent.Model, store tickets.Store) *env {
	t.Helper()
	return newEnvFull(t, m, defaultStaff, store)
}

func newEnvFull(t testing.TB, m agent.Model, staff []string, store tickets.Store, opts ...func(*agent.Config, *processor.Config)) *env {
	t.Helper()
	return newEnvAt(t, t.TempDir(), m, staff, store, opts...)
}

// newEnvAt is newEnvFull with its files (the warranty CSV, the tickets, the
// outbox) in dir: two envs on one dir are two runs sharing them.
func newEnvAt(t testing.TB, dir string, m agent.Model, staff []string, store tickets.Store, opts ...func(*agent.Config, *processor.Config)) *env {
	t.Helper()
	return newEnvDispatch(t, dir, m, staff, store, nil, opts...)
}

// newEnvDispatch is newEnvAt with dopt, when set, changing the dispatcher's
// configuration.
func newEnvDispatch(t testing.TB, dir string, m agent.Model, staff []string, store tickets.Store, dopt func(*dispatcher.Config), opts ...func(*agent.Config, *processor.Config)) *env {
	t.Helper()
	set := testScenarios(t)
	ts := toolstest.Shipped(t)
	w, tk, ob, ext := newBackends(t, dir, "SN-48213-PL,valid,2027-05-31,Ekspres\nSN98765,expired,2024-06-15,Toster\n")
	ticketsDB, outbox := filepath.Join(dir, "tickets.db"), filepath.Join(dir, "outbox")
	ac := agent.Config{Model: m, MaxRetries: -1}
	pc := processor.Config{
		Scenarios: set, Extractor: ext, ModelName: "scripted",
		Guard:   guard.Config{OwnAddresses: []string{"serwis@example.com"}},
		Tickets: storeOr(store, tk),
		History: ob, // as in triage process: the outbox remembers our replies
		Staff:   &dispatcher.Notifier{Sender: ob, From: "Serwis <serwis@example.com>", Domain: "example.com"},
	}
	for _, o := range opts {
		o(&ac, &pc)
	}
	dc := dispatcher.Config{Tools: ts, StaffAddresses: staff,
		Builtins: dispatcher.Routes(w, nil, tk, ob, "Serwis <serwis@example.com>", "example.com",
			dispatcher.Notices{Case: outboxCase{storeOr(store, tk), ob}, ConsoleURL: "https://console.example.com/"})}
	if dopt != nil {
		dopt(&dc)
	}
	p, err := processor.Assemble(ac, dc, pc)
	if err != nil {
		t.Fatal(err)
	}
	return &env{proc: p, outbox: outbox, ob: ob, tickets: tk, ticketsDB: ticketsDB}
}

// outboxCase is what a staff notice reads of the case in triage process:
// the ticket store and the outbox's replies.
type outboxCase struct {
	tickets tickets.Conversations
	outbox  *replies.Outbox
}

func (c outboxCase) Ticket(ctx context.Context, id string) (*tickets.State, error) {
	return c.tickets.Get(ctx, id)
}

func (c outboxCase) Reply(ctx context.Context, id string) ([]byte, bool, error) {
	return c.outbox.ReplyRaw(ctx, id)
}

func storeOr(s tickets.Store, def *tickets.SQLite) tickets.Store {
	if s != nil {
		return s
	}
	return def
}

func eml(from, subject, body string, extra ...string) []byte {
	h := fmt.Sprintf("From: %s\r\nTo: serwis@example.com\r\nSubject: %s\r\nDate: Mon, 16 Nov 2026 10:00:00 +0100\r\nMessage-ID: <%x@example.pl>\r\n", from, subject, len(body)+len(subject))
	for _, e := range extra {
		h += e + "\r\n"
	}
	return []byte(h + "Content-Type: text/plain; charset=utf-8\r\n\r\n" + body + "\r\n")
}

// summary is the part of an outcome these tests compare.
type summary struct {
	Status   triage.Status
	Reason   triage.Reason
	Scenario string
	Method   processor.DetectionMethod
	Calls    []string
	Serials  []string
}

func summarize(o processor.Outcome) summary {
	s := summary{Status: o.Status, Reason: o.Reason, Scenario: o.Scenario, Method: o.Detection.Method, Serials: o.SerialNumbers}
	for _, c := range o.FunctionCalls {
		if c.Prefetched {
			// A look-up the pipeline ran before the first turn, not a
			// call of the model's: prefetch_test.go checks them.
			continue
		}
		mark := "ok"
		switch {
		case c.Blocked:
			mark = "blocked:" + string(c.Error.Code)
		case !c.OK:
			mark = "error:" + string(c.Error.Code)
		}
		s.Calls = append(s.Calls, c.Name+" "+mark)
	}
	return s
}

func TestProcess(t *testing.T) {
	const valid = "Dzień dobry, mój ekspres SN-48213-PL nie działa. Proszę o naprawę gwarancyjną."
	tests := []struct {
		name  string
		model *scripted
		raw   []byte
		want  summary
	}{
		{
			name:  "valid warranty: check, ticket, reply",
			model: &scripted{},
			raw:   eml("Anna <anna@example.pl>", "Reklamacja", valid),
			want: summary{Status: "replied", Scenario: "valid-warranty", Method: "rules",
				Calls: []string{"check_warranty ok", "create_ticket ok", "send_email ok"}, Serials: []string{"SN-48213-PL"}},
		},
		{
			name:  "expired: no ticket",
			model: &scripted{},
			raw:   eml("jan@example.pl", "Toster", "Toster SN98765 nie grzeje, proszę o naprawę."),
			want: summary{Status: "replied", Scenario: "valid-warranty", Method: "rules",
				Calls: []string{"check_warranty ok", "send_email ok"}, Serials: []string{"SN98765"}},
		},
		{
			name:  "model ends with text: failed, email_not_sent",
			model: &scripted{textOnly: true},
			raw:   eml("anna@example.pl", "Reklamacja", valid),
			want:  summary{Status: "failed", Reason: "email_not_sent", Scenario: "valid-warranty", Method: "rules", Serials: []string{"SN-48213-PL"}},
		},
		{
			name:  "model mails a third party: refused, never replied",
			model: &scripted{to: "attacker@evil.example"},
			raw:   eml("anna@example.pl", "Reklamacja", valid),
			want: summary{Status: "failed", Reason: "email_not_sent", Scenario: "valid-warranty", Method: "rules",
				Calls:   []string{"check_warranty ok", "create_ticket ok", "send_email blocked:recipient_not_allowed"},
				Serials: []string{"SN-48213-PL"}},
		},
		{
			name:  "auto-reply skipped before any model call",
			model: &scripted{err: errors.New("must not be called")},
			raw:   eml("anna@example.pl", "Out of office", "I am away.", "Auto-Submitted: auto-replied"),
			want:  summary{Status: "skipped", Reason: "auto_submitted"},
		},
		{
			name:  "no sender",
			model: &scripted{err: errors.New("must not be called")},
			raw:   []byte("To: serwis@example.com\r\nSubject: hej\r\n\r\nSN-48213-PL\r\n"),
			want:  summary{Status: "failed", Reason: "no_sender"},
		},
		{
			// net/mail cannot parse it; the address must not be guessed
			// from the display name (nor from the angle brackets).
			name:  "address in the display name: no_sender, left for a person",
			model: &scripted{err: errors.New("must not be called")},
			raw:   eml("victim@bank.example <attacker@evil.example>", "Reklamacja", valid),
			want:  summary{Status: "failed", Reason: "no_sender"},
		},
		{
			name:  "From without angle brackets: no_sender",
			model: &scripted{err: errors.New("must not be called")},
			raw:   eml("Jan Kowalski jan.kowalski@example.pl", "Reklamacja", valid),
			want:  summary{Status: "failed", Reason: "no_sender"},
		},
		{
			name:  "model down: fallback scenario chosen, nothing sent, failed",
			model: &scripted{err: errors.New("boom")},
			raw:   eml("anna@example.pl", "Pytanie", "Czy zatrudniacie programistów?"),
			want:  summary{Status: "failed", Reason: "email_not_sent", Scenario: "graceful-degradation", Method: "fallback"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.model)
			out := e.proc.Process(context.Background(), processor.Input{Name: "in.eml", Raw: tt.raw})
			got := summarize(out)
			if got.Serials == nil {
				got.Serials = nil
			}
			want := tt.want
			if want.Serials == nil {
				want.Serials = []string{}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("outcome (-want +got):\n%s\ndetail: %s", diff, out.Detail)
			}
			if out.Status == triage.StatusReplied {
				if out.Reply == nil || out.Reply.Path == "" || out.Reply.MessageID == "" {
					t.Fatalf("replied without reply details: %+v", out.Reply)
				}
				if _, err := os.Stat(out.Reply.Path); err != nil {
					t.Errorf("reply file: %v", err)
				}
			} else if out.Reply != nil {
				t.Errorf("status %s but reply %+v", out.Status, out.Reply)
			}
			if out.Status == triage.StatusFailed && out.Detail == "" {
				t.Error("failed outcome without detail")
			}
		})
	}
}

// TestProcessIdempotentTicket: the same email processed twice opens one ticket.
func TestProcessIdempotentTicket(t *testing.T) {
	e := newEnv(t, &scripted{})
	raw := eml("anna@example.pl", "Reklamacja", "Ekspres SN-48213-PL przecieka, proszę o naprawę.")
	var ids []string
	for range 2 {
		out := e.proc.Process(context.Background(), processor.Input{Name: "a.eml", Raw: raw})
		for _, c := range out.FunctionCalls {
			if c.Name == "create_ticket" {
				ids = append(ids, fmt.Sprint(c.Result["ticket_id"], "/", c.Result["status"]))
			}
		}
	}
	if len(ids) != 2 || !strings.HasSuffix(ids[1], "/existing") || strings.Split(ids[0], "/")[0] != strings.Split(ids[1], "/")[0] {
		t.Errorf("ticket results = %v, want the same ticket twice, second existing", ids)
	}
}

// BenchmarkProcess measures the pipeline per email excluding the model: parse,
// guard, extract, detect (rules), prompt, the dispatcher with CSV, SQLite and
// outbox clients, and verify. The model is a Go-level script (no HTTP).
func BenchmarkProcess(b *testing.B) {
	e := newEnv(b, &scripted{})
	raw := eml("Anna <anna@example.pl>", "Reklamacja ekspresu", strings.Repeat("Dzień dobry, mój ekspres SN-48213-PL nie działa i przecieka. ", 20))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		out := e.proc.Process(context.Background(), processor.Input{Name: "bench.eml", Raw: raw, Key: triage.Key(fmt.Sprint("k", i))})
		if out.Status != triage.StatusReplied {
			b.Fatalf("status %s: %s", out.Status, out.Detail)
		}
	}
}
