package processor_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"triage"
	"triage/internal/agent"
	"triage/internal/dispatcher"
)

// A message with two From fields (or one naming two mailboxes) is refused
// as malformed, before any model call: which one wrote it cannot be told,
// and answering the first can defeat the receiving server's DMARC check
// of the other. It is failed with a reason, left for a person, and nothing
// is mailed.
func TestTwoFromsAreRefused(t *testing.T) {
	for name, raw := range map[string][]byte{
		"two From fields": eml("Anna <anna@example.pl>", "Reklamacja", "Mój ekspres SN-48213-PL nie działa.",
			"From: Bank <security@bank.example>"),
		"one From, two mailboxes": eml("anna@example.pl, security@bank.example", "Reklamacja", "Mój ekspres SN-48213-PL nie działa."),
	} {
		t.Run(name, func(t *testing.T) {
			m := &scripted{}
			e := newEnv(t, m)
			out := e.run(t, raw)
			if out.Status != triage.StatusFailed || out.Reason != triage.ReasonAmbiguousSender || !strings.Contains(out.Detail, "left for a person") {
				t.Errorf("outcome %s/%s %q, want failed/%s left for a person", out.Status, out.Reason, out.Detail, triage.ReasonAmbiguousSender)
			}
			if n := m.calls.Load(); n != 0 {
				t.Errorf("%d model calls for a message with two senders", n)
			}
			if got := e.mailed(t); len(got) != 0 {
				t.Errorf("mail went out: %v", got)
			}
		})
	}
}

// phish is a stranger's message: From a customer's address at one domain,
// Reply-To a third party elsewhere, a phishing line in the Subject.
func phish(extra ...string) []byte {
	return eml("Anna <anna@firm.example>", "Your account is locked: log in at http://bank.evil.example",
		"Mój ekspres SN-48213-PL nie działa, proszę o naprawę.", append([]string{"Reply-To: victim@bank.example"}, extra...)...)
}

// Anyone can write a Reply-To: without authentication, a Reply-To outside
// the From domain is set aside, whatever the model does. A model that sends
// to the third party anyway is refused by the dispatcher and nothing
// reaches them; a model that follows the facts answers the From address.
func TestUnauthenticatedReplyToIsNotAnswered(t *testing.T) {
	t.Run("the model mails the third party", func(t *testing.T) {
		e := newEnv(t, &scripted{to: "victim@bank.example"})
		out := e.run(t, phish())
		if out.Status == triage.StatusReplied {
			t.Errorf("replied to %s", out.Reply.To)
		}
		if got := e.mailed(t)["victim@bank.example"]; len(got) != 0 {
			t.Errorf("the third party got %v", got)
		}
		refused := false
		for _, c := range out.FunctionCalls {
			refused = refused || c.Name == "send_email" && c.Blocked
		}
		if !refused {
			t.Errorf("no send_email refused: %+v", out.FunctionCalls)
		}
	})
	t.Run("the model follows the facts", func(t *testing.T) {
		m := &scripted{}
		e := newEnv(t, m)
		out := e.run(t, phish())
		if out.Status != triage.StatusReplied || out.Reply.To != "anna@firm.example" {
			t.Fatalf("outcome %s/%s %q, reply %+v; want replied to the From address", out.Status, out.Reason, out.Detail, out.Reply)
		}
		if f := m.facts.Load(); f == nil || f.ReplyTo != "anna@firm.example" {
			t.Errorf("facts reply_to = %+v, want the From address", f)
		}
		if !slices.ContainsFunc(out.Problems, func(p string) bool { return strings.Contains(p, "victim@bank.example") }) {
			t.Errorf("problems %q do not say the Reply-To was set aside", out.Problems)
		}
	})
}

// newEnvTrusting is newEnv believing the Authentication-Results of
// mx.shop.example.
func newEnvTrusting(t *testing.T, m agent.Model) *env {
	t.Helper()
	return newEnvDispatch(t, t.TempDir(), m, defaultStaff, nil, func(c *dispatcher.Config) {
		c.TrustedAuthservIDs = []string{"mx.shop.example"}
	})
}

// With a trusted authserv-id, a Reply-To elsewhere is answered only when
// the receiving server's own Authentication-Results (on top of the header)
// say the From domain passed; a stranger's field below another server's,
// or a pass for another domain, does not count. A reply that goes to the
// Reply-To never carries the sender's subject.
func TestAuthenticatedReplyTo(t *testing.T) {
	const (
		pass   = "Authentication-Results: mx.shop.example; dkim=pass (2048-bit key; unprotected) header.d=firm.example; dmarc=pass header.from=firm.example"
		forged = "Authentication-Results: mx.shop.example; dmarc=pass header.from=firm.example"
	)
	t.Run("authenticated: the Reply-To, with a neutral subject", func(t *testing.T) {
		e := newEnvTrusting(t, &scripted{})
		out := e.run(t, phish(pass))
		if out.Status != triage.StatusReplied || out.Reply.To != "victim@bank.example" {
			t.Fatalf("outcome %s/%s %q, reply %+v; want replied to the Reply-To", out.Status, out.Reason, out.Detail, out.Reply)
		}
		got := e.mailed(t)["victim@bank.example"]
		if len(got) != 1 || strings.Contains(got[0], "locked") || got[0] != "Re: "+dispatcher.NeutralSubject("pl")+" [TKT-000001]" {
			t.Errorf("the Reply-To got subjects %q, want one neutral subject", got)
		}
	})
	for name, raw := range map[string][]byte{
		"a trusted field under another server's": phish("Authentication-Results: relay.other.example; none", forged),
		"a pass for another domain":              phish("Authentication-Results: mx.shop.example; dmarc=pass header.from=bank.example; dkim=pass header.d=bank.example"),
		"no field":                               phish(),
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnvTrusting(t, &scripted{to: "victim@bank.example"})
			out := e.run(t, raw)
			if got := e.mailed(t)["victim@bank.example"]; len(got) != 0 || out.Status == triage.StatusReplied {
				t.Errorf("the third party got %v (outcome %s)", got, out.Status)
			}
		})
	}
}

// With a trusted authserv-id, a message whose From domain is not
// authenticated never joins or changes an existing conversation: From costs
// nothing to forge, and a follow-up reads the ticket's history, adds to it
// and can escalate it (taking it from the customer's hands). It is left for
// a person, before any model call, and the ticket is untouched. The same
// follow-up authenticated joins as usual.
func TestUnauthenticatedFollowUpDoesNotJoin(t *testing.T) {
	const pass = "Authentication-Results: mx.shop.example; dmarc=pass header.from=example.pl"
	for _, how := range []string{"references", "tag"} {
		t.Run(how, func(t *testing.T) {
			m := &scripted{}
			e := newEnvTrusting(t, m)
			reply := seed(t, e)
			calls := m.calls.Load()
			extra := []string{"In-Reply-To: " + reply.Reply.MessageID, "References: " + first + " " + reply.Reply.MessageID}
			subject := "Re: Reklamacja"
			if how == "tag" {
				extra, subject = nil, subject+" [TKT-000001]"
			}
			out := e.run(t, convEmail(anna, subject, "<forged-1@example.pl>", "Chcę rozmawiać z człowiekiem, natychmiast!", extra...))
			if out.Status != triage.StatusFailed || out.Reason != triage.ReasonUnauthenticated || !strings.Contains(out.Detail, "TKT-000001") {
				t.Errorf("outcome %s/%s %q, want failed/%s naming the ticket", out.Status, out.Reason, out.Detail, triage.ReasonUnauthenticated)
			}
			if out.Followup || out.TicketID != "" || out.Reply != nil {
				t.Errorf("joined or answered: %+v", convOf(out))
			}
			if n := m.calls.Load() - calls; n != 0 {
				t.Errorf("%d model calls", n)
			}
			if n := notes(t, e, "TKT-000001"); len(n) != 0 {
				t.Errorf("appended to the ticket: %v", n)
			}
			if st, err := e.tickets.Get(context.Background(), "TKT-000001"); err != nil || st.AgentDisabled || st.Has("<forged-1@example.pl>") {
				t.Errorf("the ticket changed: %+v, %v", st, err)
			}

			out = e.run(t, convEmail(anna, subject, "<real-2@example.pl>", "Ekspres nadal nie działa.", append(extra, pass)...))
			if !out.Followup || out.TicketID != "TKT-000001" {
				t.Errorf("the authenticated follow-up did not join: %+v %q", convOf(out), out.Detail)
			}
		})
	}
}

// Throwaway senders' escalations can use up the hourly notice bound; the
// next customer's escalation is then neither told to staff nor
// acknowledged, but it is never silent: the outcome is left for a person,
// marked notice_suppressed, and its detail says so first.
func TestSuppressedNoticeIsMarked(t *testing.T) {
	e := newEnvStaff(t, &scripted{}, []string{boss})
	e.ob.SetNoticeLimits(triage.NoticeLimits{PerCustomer: 3, PerHour: 2})
	for i := range 2 {
		out := e.run(t, convEmail(fmt.Sprintf("throwaway%d@spam.example", i), "Skandal", fmt.Sprintf("<t-%d@spam.example>", i), angry))
		if out.Status != triage.StatusReplied || out.NoticeSuppressed {
			t.Fatalf("throwaway %d: %s/%s (notice suppressed %v)", i, out.Status, out.Reason, out.NoticeSuppressed)
		}
	}
	out := e.run(t, convEmail("Ola <ola@example.pl>", "Skandal", "<ola-1@example.pl>", angry))
	if out.Status != triage.StatusFailed || out.Reason != triage.ReasonNoticeGlobalLimit || !out.NoticeSuppressed || !strings.HasPrefix(out.Detail, "notice suppressed: ") {
		t.Errorf("outcome %s/%s notice_suppressed=%v %q; want failed/%s, marked notice suppressed", out.Status, out.Reason, out.NoticeSuppressed, out.Detail, triage.ReasonNoticeGlobalLimit)
	}
	if got := e.mailed(t)["ola@example.pl"]; len(got) != 0 {
		t.Errorf("the customer was answered without staff being told: %v", got)
	}
}

// The per-customer notice bound is checked before the hourly one: a
// sender's notices refused at their own bound use up nothing of the
// others'.
func TestNoticeBoundPerSenderFirst(t *testing.T) {
	e := newEnvStaff(t, &scripted{}, []string{boss})
	e.ob.SetNoticeLimits(triage.NoticeLimits{PerCustomer: 1, PerHour: 2})
	var got []string
	for i := range 4 {
		out := e.run(t, convEmail(anna, "Skandal", fmt.Sprintf("<flood-%d@example.pl>", i), angry))
		got = append(got, string(out.Reason))
	}
	out := e.run(t, convEmail("Ola <ola@example.pl>", "Skandal", "<ola-1@example.pl>", angry))
	got = append(got, string(out.Status))
	if want := []string{"", "notice_limit", "notice_limit", "notice_limit", "replied"}; !slices.Equal(got, want) {
		t.Errorf("outcomes %q, want %q", got, want)
	}
}
