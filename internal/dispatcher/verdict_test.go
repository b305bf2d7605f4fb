package dispatcher

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/agent"
	"triage/internal/testkit/toolstest"
)

// answers is a route that answers its calls in turn from a list.
func answers(list ...func() (Result, error)) Func {
	n := 0
	return func(context.Context, *Call) (Result, error) {
		f := list[min(n, len(list)-1)]
		n++
		return f()
	}
}

func sending(rc triage.Receipt) func() (Result, error) {
	return func() (Result, error) { return Result{Value: map[string]any{"status": "sent"}, Receipt: &rc}, nil }
}

func failing(err error) func() (Result, error) {
	return func() (Result, error) { return Result{}, err }
}

// undelivered is a mail transport's failed delivery.
type undelivered struct{ f triage.DeliveryFailure }

func (u undelivered) Error() string                               { return "smtp: " + u.f.Step + ": " + u.f.Text }
func (u undelivered) Undelivered() (triage.DeliveryFailure, bool) { return u.f, true }

func TestVerdict(t *testing.T) {
	reply := map[string]any{"to": "Jan <jan.reply@example.com>", "subject": "Re: x", "body": "hi"}
	stranger := map[string]any{"to": "eve@evil.example", "subject": "Re: x", "body": "hi"}
	notice := map[string]any{"subject": "Eskalacja", "body": "Klient prosi o kontakt."}
	sentRC := triage.Receipt{To: "jan.reply@example.com", Subject: "Re: x", MessageID: "<r1@example.com>", Drafted: true}
	limit := &Error{Code: CodePerSenderLimit, Message: "over the limit", Refused: true, Halt: true, Reason: triage.ReasonPerSenderLimit}
	noticeLimit := &Error{Code: CodeNoticeLimit, Message: "notice bound", Refused: true, Reason: triage.ReasonNoticeLimit}
	tests := []struct {
		name     string
		escalate bool
		noSc     bool
		opts     Options
		send     Func
		notify   Func
		steps    []step
		want     Verdict
	}{
		{
			name:  "sent: the receipt, after a refused call",
			send:  answers(sending(sentRC)),
			steps: []step{{FuncSendEmail, stranger}, {FuncSendEmail, reply}},
			want:  Verdict{Final: FuncSendEmail, Sent: true, Reply: &sentRC, Blocked: 1},
		},
		{
			name:  "refused at a limit: the email is left for a person",
			send:  answers(failing(limit)),
			steps: []step{{FuncSendEmail, reply}},
			want: Verdict{Final: FuncSendEmail, Blocked: 1, Refused: &Refusal{Reason: triage.ReasonPerSenderLimit, Message: "over the limit"},
				FinalError: &agent.ToolError{Code: CodePerSenderLimit, Message: "over the limit"}},
		},
		{
			name:  "a refusal a later success overcomes",
			send:  answers(failing(limit), sending(sentRC)),
			steps: []step{{FuncSendEmail, reply}, {FuncSendEmail, reply}},
			want:  Verdict{Final: FuncSendEmail, Sent: true, Reply: &sentRC, Blocked: 1},
		},
		{
			name:  "a dry run: the reply the arguments asked for",
			opts:  Options{DryRun: true},
			send:  answers(sending(sentRC)),
			steps: []step{{FuncSendEmail, reply}},
			want:  Verdict{Final: FuncSendEmail, Sent: true, DryRun: true, Reply: &triage.Receipt{To: "Jan <jan.reply@example.com>", Subject: "Re: x"}}, // as the model wrote it
		},
		{
			name:  "a final function without a receipt: the subject asked for",
			send:  Untyped(func(context.Context, *Call) (map[string]any, error) { return map[string]any{"id": 7}, nil }),
			steps: []step{{FuncSendEmail, reply}},
			want:  Verdict{Final: FuncSendEmail, Sent: true, Reply: &triage.Receipt{Subject: "Re: x"}},
		},
		{
			name:  "the last error of the final function",
			send:  answers(failing(&Error{Code: CodeUngroundedClaim, Message: "states 2031", Refused: true})),
			steps: []step{{FuncSendEmail, reply}},
			want:  Verdict{Final: FuncSendEmail, Blocked: 1, FinalError: &agent.ToolError{Code: CodeUngroundedClaim, Message: "states 2031"}},
		},
		{
			name:     "staff notified",
			escalate: true,
			steps:    []step{{FuncNotifyStaff, notice}},
			want:     Verdict{Final: FuncSendEmail, Notified: true},
		},
		{
			name:     "a notice over its bound",
			escalate: true,
			notify:   answers(failing(noticeLimit)),
			steps:    []step{{FuncNotifyStaff, notice}},
			want:     Verdict{Final: FuncSendEmail, Blocked: 1, NoticeRefused: &Refusal{Reason: triage.ReasonNoticeLimit, Message: "notice bound"}},
		},
		{
			name:  "no scenario: no final function",
			noSc:  true,
			steps: []step{{FuncSendEmail, reply}},
			want:  Verdict{Blocked: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			routes := (&fakeRoutes{}).routes(FuncCheckWarranty, FuncCreateTicket, FuncSendEmail, FuncNotifyStaff)
			if tt.send != nil {
				routes[FuncSendEmail] = tt.send
			}
			if tt.notify != nil {
				routes[FuncNotifyStaff] = tt.notify
			}
			d, err := New(Config{Tools: toolstest.Shipped(t), Routes: routes, StaffAddresses: []string{"boss@example.com"}, Now: stepClock()})
			if err != nil {
				t.Fatal(err)
			}
			sc := testScenario(t, tt.escalate)
			if tt.noSc {
				sc = nil
			}
			s := d.Session(testMessage(), sc, "key-1")
			s.SetOptions(tt.opts)
			for _, st := range tt.steps {
				s.Call(context.Background(), st.name, st.args)
			}
			if diff := cmp.Diff(tt.want, s.Verdict()); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
		})
	}
}

// A reply the mail server refused for good is the verdict's send failure.
func TestVerdictSendFailure(t *testing.T) {
	d, err := New(Config{Tools: toolstest.Shipped(t), Routes: map[string]Func{
		FuncSendEmail: answers(failing(undelivered{triage.DeliveryFailure{Step: "rcpt", Code: 550, Text: "5.1.1 no such user"}})),
	}, Builtins: (&fakeRoutes{}).routes(FuncCheckWarranty, FuncCreateTicket, FuncNotifyStaff)})
	if err != nil {
		t.Fatal(err)
	}
	s := d.Session(testMessage(), testScenario(t, false), "key-1")
	s.Call(context.Background(), FuncSendEmail, map[string]any{"to": "jan.reply@example.com", "subject": "Re: x", "body": "hi"})
	v := s.Verdict()
	want := &SendFailure{Function: FuncSendEmail, Op: "rcpt", Code: 550, Text: "5.1.1 no such user"}
	if diff := cmp.Diff(want, v.SendFailure); diff != "" || v.Sent {
		t.Errorf("sent %v, send failure (-want +got):\n%s", v.Sent, diff)
	}
	if v.FinalError == nil || v.FinalError.Code != CodeSendFailed {
		t.Errorf("final error %v, want %s", v.FinalError, CodeSendFailed)
	}
}
