package console

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"triage"
	"triage/internal/ledger"
	"triage/internal/replies"
	"triage/internal/testkit/mailtest"
	"triage/internal/testkit/pgtest"
	"triage/internal/watch"
)

// unconfirmed records an email as watch leaves it after a crash between
// recording its reply and hearing from the mail server: the reply row
// needs a person, the email is in Needs-Human as reply_unconfirmed, with
// no trajectory. It returns the email's ref and the reply's raw bytes.
func (f *fixture) unconfirmed(t *testing.T, uid uint32, from, subject string) (string, []byte) {
	t.Helper()
	ctx := context.Background()
	key := f.email(t, email{uid: uid, messageID: "<" + from + "-1>", from: from, subject: subject, text: "Is it covered?",
		state: ledger.StateNeedsHuman, reason: triage.ReasonReplyUnconfirmed})
	id, raw := f.rendered(t, key, from, "Your kettle is covered until 2027.", false)
	if err := f.Ledger.Replies().PutPending(ctx, replies.Reply{Key: key, MessageID: id, To: from, Raw: raw}); err != nil {
		t.Fatal(err)
	}
	if err := f.Ledger.Replies().MarkReplyNeedsHuman(ctx, key); err != nil {
		t.Fatal(err)
	}
	return key.Ref(), raw
}

// TestBrowserCrashLeftovers drives what a daemon crash leaves, in
// Chromium against a real Dovecot, on SQLite and on PostgreSQL: opening an
// unconfirmed reply that is in the Sent folder settles it as sent (it
// leaves the queue, the reply is recorded sent, the page says why); one
// that is not stays, the page explains what happened without blaming the
// console's age, and a person dismisses it as settled by hand. A failed
// email without a usable sender offers no retry.
func TestBrowserCrashLeftovers(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := browser(t)
		dir := screenshotDir(t)
		d := mailtest.StartDovecot(t)
		tgt := d.Target()
		tgt.CreateFolder(t, "Sent")
		f := newFixtureOn(t, target)
		sentRef, sentRaw := f.unconfirmed(t, 20, "gina@example.com", "Kettle")
		lostRef, _ := f.unconfirmed(t, 21, "hugo@example.com", "Toaster")
		d.Append(t, "Sent", sentRaw)
		noSender := f.email(t, email{uid: 22, messageID: "<nosender-1>", from: "", subject: "???", text: "hello",
			state: ledger.StateFailed, reason: triage.ReasonNoSender}).Ref()
		finder, err := watch.New(watch.Config{Addr: tgt.Addr, TLS: watch.TLSNone, Username: tgt.User, Password: tgt.Password,
			SentFolder: "Sent", DryRun: true, Processor: idle{}})
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(Config{Ledger: f.Ledger, Tickets: f.Tickets, Sent: finder, Token: testToken, Now: f.Clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		ts := newTestServer(t, s)
		signIn(t, ctx, ts.URL, "Lena Lead")
		refs := queueRefs(t, ctx, ts.URL)
		if !slices.Contains(refs, sentRef) || !slices.Contains(refs, lostRef) {
			t.Fatalf("the unconfirmed replies are not in the queue: %v", refs)
		}

		step(t, ctx, "open the reply that was sent",
			chromedp.Navigate(ts.URL+"/conversation/"+sentRef),
			chromedp.WaitVisible(chromedp.CSS(`.sent-check`)),
		)
		if got := eval[string](t, ctx, `document.querySelector(".sent-check").textContent`); !strings.Contains(got, "is there once, so it was sent") {
			t.Errorf("check of the sent reply says %q", got)
		}
		if got := eval[string](t, ctx, `document.querySelector(".decide-panel p.closed").textContent`); !strings.Contains(got, "found in the Sent folder · by Sent folder check") {
			t.Errorf("closed line %q", got)
		}
		r, err := f.Ledger.Replies().GetReply(context.Background(), f.keyOf(t, sentRef))
		if err != nil || r.State != replies.ReplySent {
			t.Errorf("the reply found in the Sent folder: state %q, %v; want sent", r.State, err)
		}

		step(t, ctx, "open the reply that was not",
			chromedp.Navigate(ts.URL+"/conversation/"+lostRef),
			chromedp.WaitVisible(chromedp.CSS(`.sent-check`)),
		)
		text := eval[string](t, ctx, `document.querySelector("main").textContent`)
		if !strings.Contains(text, "is not there") || !strings.Contains(text, "triage watch stopped (a crash") || strings.Contains(text, "before the console existed") {
			t.Errorf("the unsettled reply's page explains:\n%s", text)
		}
		shot(t, ctx, dir, "conversation-unconfirmed")
		if flash := decide(t, ctx, ts.URL, lostRef, "close-box", "settled_by_hand", "dismiss"); !strings.Contains(flash, "dismissed") {
			t.Errorf("flash after dismiss %q", flash)
		}
		refs = queueRefs(t, ctx, ts.URL)
		if slices.Contains(refs, sentRef) || slices.Contains(refs, lostRef) {
			t.Errorf("settled leftovers still in the queue: %v", refs)
		}
		if r, _ := f.Ledger.Replies().GetReply(context.Background(), f.keyOf(t, lostRef)); r.State != replies.ReplyNeedsHuman {
			t.Errorf("the dismissed reply's state %q: it is never recorded sent", r.State)
		}

		step(t, ctx, "open the email without a sender",
			chromedp.Navigate(ts.URL+"/conversation/"+noSender),
			chromedp.WaitVisible(chromedp.CSS(`.no-retry`)),
		)
		if n := eval[int](t, ctx, `document.querySelectorAll("#retry").length`); n != 0 {
			t.Error("retry is offered for an email that has no usable sender")
		}
	})
}

// keyOf is the key of the email at ref.
func (f *fixture) keyOf(t *testing.T, ref string) triage.Key {
	t.Helper()
	es, err := f.Ledger.ByRef(context.Background(), ref)
	if err != nil || len(es) == 0 {
		t.Fatalf("email %s: %v", ref, err)
	}
	return es[0].Key
}
