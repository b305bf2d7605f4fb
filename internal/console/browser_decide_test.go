package console

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"triage/internal/ledger"
	"triage/internal/replies"
	"triage/internal/testkit/pgtest"
)

// signIn signs the browser in to the console at base as name.
func signIn(t *testing.T, ctx context.Context, base, name string) {
	t.Helper()
	step(t, ctx, "sign in",
		chromedp.Navigate(base+"/queue"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=token]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=name]`), name),
		chromedp.SendKeys(chromedp.CSS(`input[name=token]`), testToken),
		chromedp.Submit(chromedp.CSS(`input[name=token]`)),
		chromedp.WaitVisible(chromedp.CSS(`table.list`)),
	)
}

// queueRefs are the conversations the queue page in the browser lists.
func queueRefs(t *testing.T, ctx context.Context, base string) []string {
	t.Helper()
	step(t, ctx, "open the queue", chromedp.Navigate(base+"/queue"), chromedp.WaitVisible(chromedp.CSS(`table.list`)))
	return eval[[]string](t, ctx, `[...document.querySelectorAll("table.list tbody tr a[href^='/conversation/']")].map(a => a.getAttribute("href").split("/")[2])`)
}

// decide opens the form of a details box on the email's page, chooses
// the reason and presses the button, and waits for the line saying what
// happened.
func decide(t *testing.T, ctx context.Context, base, ref, box, reason, button string) string {
	t.Helper()
	step(t, ctx, "decide "+button+" on "+ref,
		chromedp.Navigate(base+"/conversation/"+ref),
		chromedp.WaitVisible(chromedp.CSS(`details.`+box+` summary`)),
		chromedp.Click(chromedp.CSS(`details.`+box+` summary`)),
		chromedp.SetValue(chromedp.CSS(`details.`+box+` select[name=reason]`), reason),
		chromedp.SendKeys(chromedp.CSS(`details.`+box+` input[name=note]`), "from the browser"),
		chromedp.Click(chromedp.CSS(`details.`+box+` button.`+button)),
		chromedp.WaitVisible(chromedp.CSS(`p.flash`)),
	)
	return eval[string](t, ctx, `document.querySelector("p.flash").textContent`)
}

// TestBrowserDecisions drives a support lead's decisions in Chromium, on
// SQLite and on PostgreSQL: reject a draft with a reason (the customer
// stays in the queue, shown as rejected), dismiss it as spam (it leaves the
// queue), reopen it (it comes back), resolve a failed email as answered
// elsewhere; a reject without a reason is refused by the form itself.
func TestBrowserDecisions(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := browser(t)
		dir := screenshotDir(t)
		f := newFixtureOn(t, target)
		_, ts := f.server(t, nil)
		signIn(t, ctx, ts.URL, "Lena Lead")

		// The form will not go without a reason.
		step(t, ctx, "reject without a reason",
			chromedp.Navigate(ts.URL+"/conversation/"+f.Draft),
			chromedp.WaitVisible(chromedp.CSS(`details.reject-box summary`)),
			chromedp.Click(chromedp.CSS(`details.reject-box summary`)),
			chromedp.Click(chromedp.CSS(`details.reject-box button.reject`)),
		)
		if valid := eval[bool](t, ctx, `document.querySelector("details.reject-box form").checkValidity()`); valid {
			t.Error("the reject form is valid without a reason")
		}
		if r := draftRow(t, f); r.Outcome != "" {
			t.Fatalf("draft outcome %q after a reject without a reason", r.Outcome)
		}
		shot(t, ctx, dir, "conversation-reject")
		if flash := decide(t, ctx, ts.URL, f.Draft, "reject-box", "wrong_facts", "reject"); !strings.Contains(flash, "waits for a person") {
			t.Errorf("flash after reject %q", flash)
		}
		if r := draftRow(t, f); r.Outcome != replies.DraftRejected {
			t.Errorf("draft outcome %q, want rejected", r.Outcome)
		}
		hist, err := f.Ledger.Resolutions(context.Background(), draftRow(t, f).Key)
		if err != nil || len(hist) != 1 || hist[0].Reason != ledger.RejectWrongFacts || hist[0].Person != "Lena Lead" || hist[0].Note != "from the browser" {
			t.Errorf("recorded rejection %+v, %v", hist, err)
		}
		refs := queueRefs(t, ctx, ts.URL)
		why := eval[[]string](t, ctx, `[...document.querySelectorAll("table.list tbody .badge")].map(e => e.title)`)
		if i := slices.Index(refs, f.Draft); i < 0 || why[i] != "rejected" {
			t.Errorf("queue %v %v: the rejected draft's customer does not wait as rejected", refs, why)
		}

		if flash := decide(t, ctx, ts.URL, f.Draft, "close-box", "spam", "dismiss"); flash != "The email was dismissed: it left the queue." {
			t.Errorf("flash after dismiss %q", flash)
		}
		if got := eval[string](t, ctx, `document.querySelector(".decide-panel p.closed").textContent`); !strings.Contains(got, "dismissed spam · by Lena Lead") {
			t.Errorf("closed line %q", got)
		}
		if slices.Contains(queueRefs(t, ctx, ts.URL), f.Draft) {
			t.Error("the dismissed email is still in the queue")
		}
		step(t, ctx, "reopen",
			chromedp.Navigate(ts.URL+"/conversation/"+f.Draft),
			chromedp.WaitVisible(chromedp.CSS(`button.reopen`)),
			chromedp.Click(chromedp.CSS(`button.reopen`)),
			chromedp.WaitVisible(chromedp.CSS(`p.flash`)),
		)
		if n := eval[int](t, ctx, `document.querySelectorAll("ol.history li").length`); n != 3 {
			t.Errorf("the history lists %d decisions, want 3 (rejected, dismissed, reopened)", n)
		}
		if !slices.Contains(queueRefs(t, ctx, ts.URL), f.Draft) {
			t.Error("the reopened email is not back in the queue")
		}
		if flash := decide(t, ctx, ts.URL, f.Hostile, "close-box", "answered_elsewhere", "resolve"); flash != "The email was resolved: it left the queue." {
			t.Errorf("flash after resolve %q", flash)
		}
		shot(t, ctx, dir, "conversation-resolved")
		if slices.Contains(queueRefs(t, ctx, ts.URL), f.Hostile) {
			t.Error("the resolved email is still in the queue")
		}
	})
}
