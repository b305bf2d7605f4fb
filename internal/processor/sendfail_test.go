package processor_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/emersion/go-smtp"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"triage"
	"triage/internal/agent"
	"triage/internal/clients/mail"
	"triage/internal/clients/tickets"
	"triage/internal/dispatcher"
	"triage/internal/processor"
	"triage/internal/testkit/mailtest"
	"triage/internal/testkit/toolstest"
)

// sendEnv is the pipeline with replies submitted over SMTP to sink.
func sendEnv(t *testing.T, m agent.Model, sink *mailtest.SMTPSink) (*processor.Processor, *tickets.SQLite) {
	t.Helper()
	sender, err := mail.NewSMTP(mail.SMTPConfig{Addr: sink.Addr, TLS: mail.TLSNone, Username: "relay", Password: "relaypw"})
	if err != nil {
		t.Fatal(err)
	}
	return senderEnv(t, m, sender)
}

// senderEnv is the pipeline with replies handed to sender.
func senderEnv(t *testing.T, m agent.Model, sender mail.Sender) (*processor.Processor, *tickets.SQLite) {
	t.Helper()
	dir := t.TempDir()
	set := testScenarios(t)
	w, tk, _, ext := newBackends(t, dir, "SN-48213-PL,valid,2099-05-31,Ekspres\n")
	p, err := processor.Assemble(agent.Config{Model: m, MaxRetries: -1},
		dispatcher.Config{Tools: toolstest.Shipped(t), Builtins: dispatcher.Routes(w, nil, tk, sender, "Serwis <serwis@example.com>", "example.com", dispatcher.Notices{})},
		processor.Config{Scenarios: set, Extractor: ext, ModelName: "scripted", Tickets: tk})
	if err != nil {
		t.Fatal(err)
	}
	return p, tk
}

// A reply the mail server refuses is failed/send_failed with the server's
// code and text, whatever the model says afterwards; a permanent refusal
// ends the loop at once, a temporary one follows the retry rules (the
// model is told and may try again). The ticket opened for the email says
// that its reply did not go out.
func TestSendFailed(t *testing.T) {
	tests := []struct {
		name       string
		opts       mailtest.SMTPOptions
		failNext   []error
		wantDetail []string
		modelCalls int64
	}{{
		// The server offers no mechanism triage speaks: AUTH PLAIN is
		// answered 504, as in the report that found this.
		name:       "auth refused 504",
		opts:       mailtest.SMTPOptions{User: "relay", Password: "relaypw", Mechanisms: []string{"CRAM-MD5"}},
		wantDetail: []string{"send_email", "auth", "504", "5.7.4 Unsupported authentication mechanism", "permanent"},
		modelCalls: 3, // check_warranty, create_ticket, send_email: no turn after the refusal
	}, {
		name:       "recipient rejected 550",
		opts:       mailtest.SMTPOptions{User: "relay", Password: "relaypw", Reject: map[string]error{"jan@example.pl": &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "No such user"}}},
		wantDetail: []string{"rcpt", "550 5.1.1 No such user", "permanent"},
		modelCalls: 3,
	}, {
		name:       "temporary 451",
		opts:       mailtest.SMTPOptions{User: "relay", Password: "relaypw"},
		failNext:   []error{&smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "Try again later"}},
		wantDetail: []string{"data", "451 4.3.0 Try again later", "temporary"},
		modelCalls: 5, // the model is told, answers in text, is nudged once, gives up
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sink := mailtest.StartSMTPSink(t, tc.opts)
			sink.FailNext(tc.failNext...)
			m := &scripted{}
			p, tk := sendEnv(t, m, sink)
			out := p.Process(context.Background(), processor.Input{Name: "in.eml",
				Raw: eml("jan@example.pl", "Reklamacja", "Ekspres SN-48213-PL nie grzeje.")})
			if out.Status != triage.StatusFailed || out.Reason != triage.ReasonSendFailed {
				t.Fatalf("outcome %s/%s %q, want failed/send_failed", out.Status, out.Reason, out.Detail)
			}
			for _, s := range tc.wantDetail {
				if !strings.Contains(out.Detail, s) {
					t.Errorf("detail %q does not say %q", out.Detail, s)
				}
			}
			if got := m.calls.Load(); got != tc.modelCalls {
				t.Errorf("model calls = %d, want %d", got, tc.modelCalls)
			}
			if n := len(sink.Messages()); n != 0 {
				t.Errorf("the sink accepted %d messages", n)
			}
			if out.TicketID == "" {
				t.Fatal("no ticket was opened")
			}
			st, err := tk.Get(context.Background(), out.TicketID)
			if err != nil {
				t.Fatal(err)
			}
			var noted bool
			for _, n := range st.Notes {
				noted = noted || (n.From == processor.NoteAuthor && strings.Contains(n.Text, "could not send") && strings.Contains(n.Text, tc.wantDetail[len(tc.wantDetail)-2]))
			}
			if !noted {
				t.Errorf("ticket %s notes %+v: none says the reply failed", out.TicketID, st.Notes)
			}
		})
	}
}

// overLimit is a mail.Sender that refuses every reply over a limit (a
// triage.Limited error), as watch's LedgerSender does when an address or
// the inbox is at its limit.
type overLimit struct{ reason triage.Reason }

func (o overLimit) Send(context.Context, *mail.Reply) (triage.Receipt, error) {
	return triage.Receipt{}, fmt.Errorf("reply to jan@example.pl: %w", limitError(o.reason))
}

type limitError triage.Reason

func (e limitError) Error() string {
	return string(e) + ": 3 replies already count against jan@example.pl (limit 3)"
}
func (e limitError) LimitReason() triage.Reason { return triage.Reason(e) }

// A reply the sender refuses over a limit is failed with that limit's
// reason (the watcher leaves the message for a person as over_limit), the
// refused call recorded blocked, whatever the model does afterwards.
func TestReplyOverALimit(t *testing.T) {
	for _, reason := range []triage.Reason{triage.ReasonPerSenderLimit, triage.ReasonGlobalLimit} {
		t.Run(string(reason), func(t *testing.T) {
			p, _ := senderEnv(t, &scripted{}, overLimit{reason})
			out := p.Process(context.Background(), processor.Input{Name: "in.eml",
				Raw: eml("jan@example.pl", "Reklamacja", "Ekspres SN-48213-PL nie grzeje.")})
			if out.Status != triage.StatusFailed || out.Reason != reason {
				t.Fatalf("outcome %s/%s %q, want failed/%s", out.Status, out.Reason, out.Detail, reason)
			}
			if !strings.Contains(out.Detail, "limit 3") {
				t.Errorf("detail %q does not say which limit", out.Detail)
			}
			var sends []string
			for _, r := range out.FunctionCalls {
				if r.Name == dispatcher.FuncSendEmail {
					sends = append(sends, fmt.Sprintf("blocked=%v code=%s", r.Blocked, r.Error.Code))
				}
			}
			if len(sends) == 0 || sends[0] != "blocked=true code="+string(reason) {
				t.Errorf("send_email calls %v, want the first blocked with code %s", sends, reason)
			}
		})
	}
}

// failAfter answers as m for its first n calls, then fails every call (a
// model API that went down).
type failAfter struct {
	m     agent.Model
	n     int64
	calls atomic.Int64
}

func (f *failAfter) GenerateContent(ctx context.Context, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	if f.calls.Add(1) > f.n {
		return nil, errors.New("scripted: model unavailable")
	}
	return f.m.GenerateContent(ctx, model, contents, cfg)
}

// A temporary refusal (451) is send_failed with a typed, temporary
// SendFailure on the outcome, also when the model fails right after it (the
// refusal is what a person must know, not the model's error). The ticket is
// noted, unless the caller tries the email again (Input.MoreAttempts): then
// the last attempt notes it, once.
func TestSendFailedTemporary(t *testing.T) {
	for _, tc := range []struct {
		name      string
		modelDies bool
		more      bool
		wantNote  bool
	}{
		{"model fails after the refusal", true, false, true},
		{"model fails after the refusal, tried again later", true, true, false},
		{"tried again later", false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := mailtest.StartSMTPSink(t, mailtest.SMTPOptions{User: "relay", Password: "relaypw"})
			sink.FailNext(&smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "Try again later"})
			var m agent.Model = &scripted{}
			if tc.modelDies {
				m = &failAfter{m: m, n: 3} // check_warranty, create_ticket, send_email; then down
			}
			p, tk := sendEnv(t, m, sink)
			out := p.Process(context.Background(), processor.Input{Name: "in.eml", MoreAttempts: tc.more,
				Raw: eml("jan@example.pl", "Reklamacja", "Ekspres SN-48213-PL nie grzeje.")})
			want := &dispatcher.SendFailure{Function: "send_email", Op: "data", Code: 451, Text: "4.3.0 Try again later", Temporary: true}
			if out.Status != triage.StatusFailed || out.Reason != triage.ReasonSendFailed {
				t.Fatalf("outcome %s/%s %q, want failed/send_failed", out.Status, out.Reason, out.Detail)
			}
			if diff := cmp.Diff(want, out.SendFailure); diff != "" {
				t.Errorf("send failure (-want +got):\n%s", diff)
			}
			st, err := tk.Get(context.Background(), out.TicketID)
			if err != nil {
				t.Fatal(err)
			}
			notes := 0
			for _, n := range st.Notes {
				if n.From == processor.NoteAuthor && strings.Contains(n.Text, "451") {
					notes++
				}
			}
			if want := map[bool]int{true: 1, false: 0}[tc.wantNote]; notes != want {
				t.Errorf("ticket %s has %d notes of the failed reply, want %d: %+v", out.TicketID, notes, want, st.Notes)
			}
		})
	}
}
