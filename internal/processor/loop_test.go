package processor_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"triage"
	"triage/internal/agent"
	"triage/internal/message"
	"triage/internal/processor"
)

// noConversations runs without a ticket store: every email stands alone,
// so the reply history alone bounds loops.
func noConversations(_ *agent.Config, pc *processor.Config) { pc.Tickets = nil }

// TestReplyLoopGoesToAPerson: a message In-Reply-To one of our replies, from
// a sender we already answered twice in the last hour, is failed/reply_loop
// without a model call; the history is the outbox itself.
// (With a conversation store, a known conversation is bounded by its
// escalation instead: see TestThirdMessageEscalates.)
func TestReplyLoopGoesToAPerson(t *testing.T) {
	m := &scripted{}
	e := newEnv(t, m, noConversations)
	const body = "Mój ekspres SN-48213-PL nadal nie działa, proszę o naprawę."
	reply := func(n int, inReplyTo string) processor.Outcome {
		t.Helper()
		extra := []string{fmt.Sprintf("Message-ID: <loop-%d@example.pl>", n)}
		if inReplyTo != "" {
			extra = append(extra, "In-Reply-To: "+inReplyTo)
		}
		raw := eml("Anna <anna@example.pl>", "Reklamacja", body, extra...)
		// eml writes its own Message-ID first; drop it so ours counts.
		raw = []byte(strings.Replace(string(raw), fmt.Sprintf("Message-ID: <%x@example.pl>\r\n", len(body)+len("Reklamacja")), "", 1))
		return e.proc.Process(context.Background(), processor.Input{Name: fmt.Sprintf("%d.eml", n), Raw: raw})
	}

	first := reply(1, "")
	second := reply(2, "<unrelated@example.pl>") // not in reply to us: no loop
	third := reply(3, first.Reply.MessageID)     // in reply to us, answered twice: a loop
	for i, o := range []processor.Outcome{first, second} {
		if o.Status != triage.StatusReplied {
			t.Fatalf("email %d: %s/%s %s", i+1, o.Status, o.Reason, o.Detail)
		}
	}
	if third.Status != triage.StatusFailed || third.Reason != triage.ReasonReplyLoop ||
		!strings.Contains(third.Detail, first.Reply.MessageID) || !strings.Contains(third.Detail, "anna@example.pl") {
		t.Errorf("third email: %s/%s %q, want failed/reply_loop naming our reply and the sender", third.Status, third.Reason, third.Detail)
	}
	if len(third.FunctionCalls) != 0 || third.Reply != nil {
		t.Errorf("a loop must reach no model and send nothing: %+v", third)
	}

	// Once answered: a follow-up to our reply is answered normally.
	e2 := newEnv(t, &scripted{}, noConversations)
	one := e2.proc.Process(context.Background(), processor.Input{Name: "a.eml", Raw: eml("anna@example.pl", "Reklamacja", body)})
	raw := eml("anna@example.pl", "Re: Reklamacja", body+" Dziękuję.", "In-Reply-To: "+one.Reply.MessageID)
	if o := e2.proc.Process(context.Background(), processor.Input{Name: "b.eml", Raw: raw}); o.Status != triage.StatusReplied {
		t.Errorf("follow-up after one reply: %s/%s %s, want replied", o.Status, o.Reason, o.Detail)
	}
}

// An autoresponder (or a client) that answers our reply without
// In-Reply-To, naming it only as the last of its References, is the same
// loop: it goes to a person too.
func TestReplyLoopByReferencesOnly(t *testing.T) {
	e := newEnv(t, &scripted{}, noConversations)
	const body = "Mój ekspres SN-48213-PL nadal nie działa, proszę o naprawę."
	run := func(n int, extra ...string) processor.Outcome {
		t.Helper()
		raw := eml("anna@example.pl", "Reklamacja", body+strings.Repeat(" ", n), extra...)
		return e.proc.Process(context.Background(), processor.Input{Name: fmt.Sprintf("%d.eml", n), Raw: raw})
	}
	first := run(1)
	second := run(2)
	for i, o := range []processor.Outcome{first, second} {
		if o.Status != triage.StatusReplied {
			t.Fatalf("email %d: %s/%s %s", i+1, o.Status, o.Reason, o.Detail)
		}
	}
	third := run(3, "References: <unrelated@example.pl> "+first.Reply.MessageID)
	if third.Status != triage.StatusFailed || third.Reason != triage.ReasonReplyLoop || !strings.Contains(third.Detail, first.Reply.MessageID) {
		t.Errorf("third email: %s/%s %q, want failed/reply_loop naming our reply", third.Status, third.Reason, third.Detail)
	}
	if third.Reply != nil {
		t.Errorf("a loop must send nothing: %+v", third.Reply)
	}
}

// Config.Answered is asked before anything else runs: a reply an earlier
// run wrote for the same message is the outcome (existing, its ticket from
// the tag), one written for another message with the same Key fails the
// email as duplicate_message_id, and a history that cannot be read leaves
// it for a person. None reaches the model.
func TestAnsweredBeforeTheModel(t *testing.T) {
	raw := eml("anna@example.pl", "Reklamacja", "Mój ekspres SN-48213-PL nie działa.")
	earlier := &triage.Receipt{MessageID: "<triage-x@example.com>", To: "anna@example.pl", Subject: "Re: Reklamacja [TKT-000042]", Path: "out/x.eml", Existing: true}
	tests := []struct {
		name    string
		rc      *triage.Receipt
		inbound func(digest string) string
		err     error
		want    string
	}{
		{"the same message", earlier, func(d string) string { return d }, nil, "replied  TKT-000042 existing"},
		{"the same message, no digest kept", earlier, func(string) string { return "" }, nil, "replied  TKT-000042 existing"},
		{"a draft", &triage.Receipt{MessageID: "<triage-x@example.com>", Subject: "Re: x", Drafted: true, Existing: true}, func(d string) string { return d }, nil, "drafted   existing"},
		{"another message with the Key", earlier, func(string) string { return "other" }, nil, "failed duplicate_message_id  "},
		{"the history fails", nil, nil, fmt.Errorf("disk on fire"), "failed history_error  "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &scripted{}
			e := newEnv(t, m, func(_ *agent.Config, pc *processor.Config) {
				pc.Answered = func(_ context.Context, key triage.Key) (*triage.Receipt, string, error) {
					if tt.rc == nil {
						return nil, "", tt.err
					}
					msg, err := message.Parse(raw)
					if err != nil {
						t.Fatal(err)
					}
					return tt.rc, tt.inbound(triage.DigestOf(msg)), tt.err
				}
			})
			out := e.proc.Process(context.Background(), processor.Input{Name: "in.eml", Raw: raw})
			got := fmt.Sprintf("%s %s %s", out.Status, out.Reason, out.TicketID)
			if out.Reply != nil && out.Reply.Existing {
				got += " existing"
			} else {
				got += " "
			}
			if got != tt.want {
				t.Errorf("outcome %q (%s), want %q", got, out.Detail, tt.want)
			}
			if n := m.calls.Load(); n != 0 || len(out.FunctionCalls) != 0 {
				t.Errorf("%d model calls, %d function calls; want none", n, len(out.FunctionCalls))
			}
		})
	}
}
