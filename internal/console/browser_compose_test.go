package console

import (
	"bytes"
	"context"
	"net/http/httptest"
	netmail "net/mail"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"triage"
	"triage/internal/clients/mail"
	"triage/internal/processor"
	"triage/internal/replies"
	"triage/internal/testkit/mailtest"
	"triage/internal/testkit/pgtest"
	"triage/internal/watch"
)

// idle is a pipeline for a watcher whose inbox holds nothing: it files
// what the console asked for and is never given a message.
type idle struct{}

func (idle) Process(_ context.Context, in processor.Input) processor.Outcome {
	return processor.Outcome{File: in.Name, Status: triage.StatusSkipped}
}

// watchOnce runs one pass of triage watch over the fixture's ledger
// against the Dovecot of tgt, its Sent folder "Sent".
func watchOnce(t *testing.T, f *fixture, tgt mailtest.Target) {
	t.Helper()
	w, err := watch.New(watch.Config{Addr: tgt.Addr, TLS: watch.TLSNone, Username: tgt.User, Password: tgt.Password,
		Processor: idle{}, Ledger: f.Ledger, SentFolder: "Sent", Now: f.Clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.RunOnce(context.Background()); err != nil {
		t.Fatalf("watch: %v", err)
	}
}

// TestBrowserComposer drives a person's reply in Chromium against a real
// Dovecot and an SMTP server, on SQLite and on PostgreSQL: on a
// conversation a colleague took over, the lead writes, saves the draft,
// finds it again after reloading, and sends it. The reply reaches the SMTP
// server threaded under the customer's email, is recorded as the lead's
// (never triage's: the draft figures do not move), leaves the queue, is
// noted on the ticket, and triage watch files it in the Sent folder
// exactly once, however often it passes.
func TestBrowserComposer(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := browser(t)
		dir := screenshotDir(t)
		d := mailtest.StartDovecot(t)
		tgt := d.Target()
		tgt.CreateFolder(t, "Sent")
		sink := mailtest.StartSMTPSink(t, mailtest.SMTPOptions{})
		smtp, err := mail.NewSMTP(mail.SMTPConfig{Addr: sink.Addr, TLS: mail.TLSNone})
		if err != nil {
			t.Fatal(err)
		}
		f := newFixtureOn(t, target)
		counts, err := f.Ledger.Replies().DraftCounts(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(Config{Ledger: f.Ledger, Tickets: f.Tickets, Sender: smtp, From: "Support <support@example.com>",
			Limits: replies.Limits{PerAddress: 5, PerHour: 100}, Token: testToken, Now: f.Clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		ts := newTestServer(t, s)
		signIn(t, ctx, ts.URL, "Lena Lead")
		if !slices.Contains(queueRefs(t, ctx, ts.URL), f.Owned) {
			t.Fatal("the taken-over follow-up is not in the queue")
		}

		const text = "Hello Bob,\n\nyour toaster SN-77777 goes to repair tomorrow; we will write when it is back.\n\nLena"
		step(t, ctx, "write and save",
			chromedp.EmulateViewport(1400, 1000),
			chromedp.Navigate(ts.URL+"/conversation/"+f.Owned),
			chromedp.WaitVisible(chromedp.CSS(`form.compose textarea`)),
			chromedp.SendKeys(chromedp.CSS(`form.compose textarea`), text[:40]),
			chromedp.Click(chromedp.CSS(`form.compose button.save-draft`)),
			chromedp.WaitVisible(chromedp.CSS(`p.flash`)),
		)
		step(t, ctx, "reopen the saved draft",
			chromedp.Navigate(ts.URL+"/conversation/"+f.Owned),
			chromedp.WaitVisible(chromedp.CSS(`form.compose .saved`)),
		)
		if got := eval[string](t, ctx, `document.querySelector("form.compose textarea").value`); got != text[:40] {
			t.Errorf("reopened draft %q, want %q", got, text[:40])
		}
		if got := eval[string](t, ctx, `document.querySelector("form.compose .saved").textContent`); !strings.Contains(got, "draft saved by Lena Lead") {
			t.Errorf("saved line %q", got)
		}
		step(t, ctx, "finish the reply",
			// Click at the end of the saved text, and go on typing.
			chromedp.Evaluate[chromedp.Void](`(() => { const t = document.querySelector("form.compose textarea"); t.focus(); t.setSelectionRange(t.value.length, t.value.length) })()`),
			chromedp.KeyEvent(text[40:]),
			chromedp.Evaluate[chromedp.Void](`document.querySelector("section.composer").scrollIntoView({block: "center"})`),
		)
		composerShot(t, ctx, dir, "console-composer")
		step(t, ctx, "send",
			chromedp.Click(chromedp.CSS(`form.compose button.send-reply`)),
			chromedp.WaitVisible(chromedp.CSS(`p.flash`)),
		)
		if flash := eval[string](t, ctx, `document.querySelector("p.flash").textContent`); !strings.HasPrefix(flash, "Your reply was sent") {
			t.Errorf("flash %q", flash)
		}

		msgs := sink.Messages()
		if len(msgs) != 1 {
			t.Fatalf("the SMTP server got %d messages, want 1", len(msgs))
		}
		m := msgs[0]
		if m.Header("In-Reply-To") != "<bob-2@example.com>" || !strings.Contains(m.Header("References"), "<bob-2@example.com>") ||
			len(m.To) != 1 || m.To[0] != "bob@example.com" || !strings.Contains(string(m.Data), "SN-77777") {
			t.Errorf("sent: To %v, In-Reply-To %q, References %q", m.To, m.Header("In-Reply-To"), m.Header("References"))
		}
		owned := f.ownedKey(t)
		sent, err := f.Ledger.Replies().PersonReplies(context.Background(), owned)
		if err != nil || len(sent) != 1 || sent[0].Author != "Lena Lead" || sent[0].Kind != replies.KindPerson || sent[0].State != replies.ReplySent ||
			sent[0].MessageID != m.Header("Message-Id") {
			t.Fatalf("recorded person replies %+v, %v", sent, err)
		}
		if after, err := f.Ledger.Replies().DraftCounts(context.Background()); err != nil || !slices.Equal(after, counts) {
			t.Errorf("the draft figures moved: %+v -> %+v (%v)", counts, after, err)
		}
		if _, err := f.Ledger.Replies().Composition(context.Background(), owned); err == nil {
			t.Error("the saved draft outlived the sent reply")
		}
		if slices.Contains(queueRefs(t, ctx, ts.URL), f.Owned) {
			t.Error("the answered email is still in the queue")
		}
		st, err := f.Tickets.Get(context.Background(), f.OwnedTicket)
		if err != nil || !st.Has(sent[0].MessageID) || len(st.Notes) == 0 || !strings.Contains(st.Notes[len(st.Notes)-1].Text, text) {
			t.Errorf("the ticket does not hold the reply and its note: %v\nmessages %+v\nnotes %+v", err, st.Messages, st.Notes)
		}

		watchOnce(t, f, tgt)
		watchOnce(t, f, tgt)
		var inSent []string
		for _, m := range d.Messages(t, "Sent") {
			inSent = append(inSent, headerOf(m.Raw, "Message-Id"))
		}
		if !slices.Equal(inSent, []string{sent[0].MessageID}) {
			t.Errorf("the Sent folder holds %v, want the reply exactly once", inSent)
		}
		step(t, ctx, "the page says where the reply is",
			chromedp.Navigate(ts.URL+"/conversation/"+f.Owned),
			chromedp.WaitVisible(chromedp.CSS(`.person-reply`)),
		)
		if got := eval[string](t, ctx, `document.querySelector(".person-reply").textContent`); !strings.Contains(got, "Reply by Lena Lead") || !strings.Contains(got, "in the Sent folder") {
			t.Errorf("the person's reply shows %q", got)
		}
	})
}

// composerShot saves the visible 1400x1000 page as dir/name.png.
func composerShot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", path)
}

// newTestServer serves s for the test.
func newTestServer(t *testing.T, s *Server) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

// ownedKey is the key of the fixture's taken-over follow-up.
func (f *fixture) ownedKey(t *testing.T) triage.Key {
	t.Helper()
	es, err := f.Ledger.ByRef(context.Background(), f.Owned)
	if err != nil || len(es) == 0 {
		t.Fatalf("the owned email: %v", err)
	}
	return es[0].Key
}

// headerOf is the value of a header field of a raw message ("" if none).
func headerOf(raw []byte, name string) string {
	msg, err := netmail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return ""
	}
	return msg.Header.Get(name)
}
