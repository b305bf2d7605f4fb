package console

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"triage/internal/clients/mail"
	"triage/internal/testkit/mailtest"
)

// ScreenshotDirEnv names the directory the browser tests write their
// screenshots to (default: the test's temporary directory, logged).
const ScreenshotDirEnv = "TRIAGE_SCREENSHOT_DIR"

// browser starts headless Chromium (Debian's chromium) for the test, or
// skips it loudly (fails under CI) when none is installed.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := os.Getenv("TRIAGE_CHROMIUM")
	if path == "" {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				path = p
				break
			}
		}
	}
	if path == "" {
		mailtest.Skip(t, "no chromium on PATH (install Debian's chromium: .ci/chromium.sh)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelC(); cancelA() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		mailtest.Skip(t, "chromium %s does not start: %v", path, err)
	}
	return ctx
}

func screenshotDir(t *testing.T) string {
	dir := os.Getenv(ScreenshotDirEnv)
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// shot saves a full-page PNG of the current page as dir/name.png.
func shot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", path)
}

// step runs actions with a bound, naming the step when it fails.
func step(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(sctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// TestBrowser drives the console in headless Chromium as a support lead
// would: sign in, read the queue, open a hostile email (its <script> stays
// text), approve a draft and see it reach the SMTP server threaded, take a
// conversation over, look at the scenarios and search the activity.
func TestBrowser(t *testing.T) {
	ctx := browser(t)
	dir := screenshotDir(t)
	f := newFixture(t)
	sink := mailtest.StartSMTPSink(t, mailtest.SMTPOptions{})
	smtp, err := mail.NewSMTP(mail.SMTPConfig{Addr: sink.Addr, TLS: mail.TLSNone})
	if err != nil {
		t.Fatal(err)
	}
	_, ts := f.server(t, smtp)

	step(t, ctx, "sign in",
		chromedp.Navigate(ts.URL+"/queue"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=token]`)),
	)
	shot(t, ctx, dir, "login")
	step(t, ctx, "sign in",
		chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "Lena Lead"),
		chromedp.SendKeys(chromedp.CSS(`input[name=token]`), testToken),
		chromedp.Submit(chromedp.CSS(`input[name=token]`)),
		chromedp.WaitVisible(chromedp.CSS(`table.list`)),
	)
	t.Run("queue", func(t *testing.T) {
		rows := eval[int](t, ctx, `document.querySelectorAll("table.list tbody tr").length`)
		why := eval[[]string](t, ctx, `[...document.querySelectorAll("table.list tbody .badge")].map(e => e.title)`)
		if rows != 4 || strings.Join(why, ",") != "draft,failed,needs_human,escalated" {
			t.Errorf("queue shows %d rows %v, want draft, failed, needs_human, escalated", rows, why)
		}
		shot(t, ctx, dir, "queue")
		// The filters work through htmx: choosing a reason reloads the list.
		step(t, ctx, "filter by reason",
			chromedp.SetValue(chromedp.CSS(`select[name=reason]`), "draft"),
			chromedp.Evaluate[chromedp.Void](`document.querySelector("select[name=reason]").dispatchEvent(new Event("change", {bubbles: true}))`),
			chromedp.Poll[chromedp.Void](`document.querySelectorAll("table.list tbody tr").length === 1`),
		)
		if loc := eval[string](t, ctx, `location.search`); loc != "?inbox=&scenario=&reason=draft&age=&sort=&owner=" {
			t.Errorf("filtered URL query %q", loc)
		}
		// The complaints show the time left to answer them; ordered by
		// deadline, the soonest comes first. The change is made again
		// until the list reloads: htmx listens on the form the last swap
		// brought only once it has processed it.
		step(t, ctx, "order by complaint deadline",
			chromedp.Poll[chromedp.Void](`(() => {
				if (document.querySelectorAll("table.list tbody tr").length === 4 && location.search.includes("sort=due")) return true;
				document.querySelector("select[name=reason]").value = "";
				const sort = document.querySelector("select[name=sort]");
				sort.value = "due";
				sort.dispatchEvent(new Event("change", {bubbles: true}));
				return false;
			})()`, chromedp.WithPollingInterval(300*time.Millisecond)),
		)
		why = eval[[]string](t, ctx, `[...document.querySelectorAll("table.list tbody .badge")].map(e => e.title)`)
		due := eval[[]string](t, ctx, `[...document.querySelectorAll("table.list tbody tr td:nth-child(3)")].map(e => e.textContent)`)
		if strings.Join(why, ",") != "needs_human,draft,failed,escalated" || strings.Join(due, ",") != "47h left,13d left,-,-" {
			t.Errorf("ordered by deadline: %v, answer by %v; want needs_human (47h left), draft (13d left), then the rest", why, due)
		}
		shot(t, ctx, dir, "queue-by-deadline")
	})

	t.Run("hostile email stays text", func(t *testing.T) {
		step(t, ctx, "open the hostile email",
			chromedp.Navigate(ts.URL+"/conversation/"+f.Hostile),
			chromedp.WaitVisible(chromedp.CSS(`pre.customer`)),
		)
		text := eval[string](t, ctx, `document.querySelector("pre.customer").textContent`)
		if !strings.Contains(text, "<script>document.title='pwned';window.pwned=1</script>") || !strings.Contains(text, `<img src=x onerror="window.pwned=2">`) {
			t.Errorf("the customer's text is not shown as written: %q", text)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll("main script, main img").length`); n != 0 {
			t.Errorf("the page holds %d script or img elements from the email", n)
		}
		if pwned := eval[bool](t, ctx, `typeof window.pwned !== "undefined" || document.title === "pwned"`); pwned {
			t.Error("the email's script ran")
		}
		if !strings.Contains(eval[string](t, ctx, `document.querySelector(".subject").textContent`), `<script>document.title="pwned"</script>Refund`) {
			t.Error("the subject is not shown as written")
		}
		if n := eval[int](t, ctx, `document.querySelectorAll("li.call.blocked").length`); n != 1 {
			t.Errorf("%d blocked calls shown, want 1", n)
		}
		shot(t, ctx, dir, "conversation-hostile")
	})

	t.Run("approve a draft", func(t *testing.T) {
		step(t, ctx, "open the draft",
			chromedp.Navigate(ts.URL+"/conversation/"+f.Draft),
			chromedp.WaitVisible(chromedp.ID("approve")),
		)
		// The model's HTML in a draft is text to edit, never markup.
		if v := eval[string](t, ctx, `document.querySelector("form.draft textarea").value`); !strings.Contains(v, `<a href="javascript:alert(1)">Track the repair</a>`) {
			t.Errorf("draft text %q lacks the HTML as written", v)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll("main a[href^=javascript]").length`); n != 0 {
			t.Errorf("the draft's link became a link (%d)", n)
		}
		shot(t, ctx, dir, "conversation")
		step(t, ctx, "approve",
			chromedp.Click(chromedp.ID("approve")),
			chromedp.WaitVisible(chromedp.CSS(`p.flash`)),
		)
		if flash := eval[string](t, ctx, `document.querySelector("p.flash").textContent`); flash != "The reply was sent." {
			t.Errorf("flash %q", flash)
		}
		msgs := sink.Messages()
		if len(msgs) != 1 {
			t.Fatalf("the SMTP server got %d messages, want 1", len(msgs))
		}
		m := msgs[0]
		if m.Header("In-Reply-To") != "<anna-1@example.com>" || m.Header("Message-Id") != draftRow(t, f).MessageID ||
			len(m.To) != 1 || m.To[0] != "anna@example.com" || !strings.Contains(string(m.Data), "under warranty") {
			t.Errorf("sent message: To %v, In-Reply-To %q, Message-Id %q", m.To, m.Header("In-Reply-To"), m.Header("Message-Id"))
		}
		if n := eval[int](t, ctx, `document.querySelectorAll("#approve").length`); n != 0 {
			t.Error("the sent draft still offers approval")
		}
	})

	t.Run("take over", func(t *testing.T) {
		step(t, ctx, "take over",
			chromedp.Click(chromedp.ID("takeover")),
			chromedp.WaitVisible(chromedp.ID("release")),
		)
		if badge := eval[string](t, ctx, `document.querySelector(".ticket h1 .badge").textContent`); badge != "taken over by Lena Lead" {
			t.Errorf("ticket badge %q", badge)
		}
		st, err := f.Tickets.Get(context.Background(), f.DraftTicket)
		if err != nil {
			t.Fatal(err)
		}
		if !st.AgentDisabled || st.Owner != "Lena Lead" {
			t.Errorf("ticket after takeover: agent_disabled %v owner %q", st.AgentDisabled, st.Owner)
		}
		shot(t, ctx, dir, "conversation-taken-over")
	})

	t.Run("scenarios", func(t *testing.T) {
		step(t, ctx, "open scenarios", chromedp.Navigate(ts.URL+"/scenarios"), chromedp.WaitVisible(chromedp.CSS(`table.list`)))
		cells := eval[[]string](t, ctx, `[...document.querySelectorAll("#scenarios tbody tr")].map(r => r.cells[0].textContent + " " + r.cells[1].textContent + " " + r.cells[7].textContent + " " + r.cells[8].textContent)`)
		// valid-warranty: 10 emails; 7 drafts sent as is (one just now, from the console) and 2 edited.
		if want := "valid-warranty 10 7 2"; !strings.Contains(strings.Join(cells, "|"), want) {
			t.Errorf("scenario rows %q lack %q", cells, want)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll("svg.spark rect").length`); n < 4 {
			t.Errorf("%d similarity bars, want at least 4 weeks", n)
		}
		usage := eval[[]string](t, ctx, `[...document.querySelectorAll("#usage tbody tr")].map(r => [...r.cells].map(c => c.textContent).join(" "))`)
		if want := "2026-11 valid-warranty 10 9 0.30 210 71% 18"; !strings.Contains(strings.Join(usage, "|"), want) {
			t.Errorf("usage rows %q lack %q", usage, want)
		}
		shot(t, ctx, dir, "scenarios")
	})

	t.Run("activity search", func(t *testing.T) {
		step(t, ctx, "search",
			chromedp.Navigate(ts.URL+"/activity"),
			chromedp.WaitVisible(chromedp.CSS(`input[name=q]`)),
			chromedp.SendKeys(chromedp.CSS(`input[name=q]`), "mallory"),
			chromedp.Poll[chromedp.Void](`document.querySelectorAll("#ledger tbody tr").length === 1`),
		)
		if from := eval[string](t, ctx, `document.querySelector("#ledger tbody tr").cells[4].textContent`); from != "mallory@evil.example" {
			t.Errorf("search found %q", from)
		}
		step(t, ctx, "clear", chromedp.Navigate(ts.URL+"/activity"), chromedp.WaitVisible(chromedp.CSS(`table.list`)))
		shot(t, ctx, dir, "activity")
	})

	// A scenario earns autonomy: 30 reviewed drafts, 93% sent as is, make
	// missing-info ready; reply mode auto switched it to sending and
	// drafted its tenth message as a sample. Rejecting the sample shows at
	// once, and the next message watch decides switches back to draft.
	t.Run("autonomy", func(t *testing.T) {
		res, sample := f.earnAutonomy(t)
		rowText := `[...document.querySelectorAll("#readiness tbody tr")].map(r => [...r.cells].map(c => c.textContent.trim().replace(/\s+/g, " ")).join(" | "))`
		switches := `[...document.querySelectorAll("#switches tbody tr")].map(r => r.cells[1].textContent + " " + r.cells[3].textContent.trim() + " " + r.cells[11].textContent)`
		step(t, ctx, "open scenarios", chromedp.Navigate(ts.URL+"/scenarios"), chromedp.WaitVisible(chromedp.ID("readiness")))
		rows := eval[[]string](t, ctx, rowText)
		if len(rows) != 2 || rows[0] != "missing-info | support@example.com/INBOX | 30 | 28 | 2 | 0 | 0 | 93% | ready 28 of the last 30 sent as is (93%), none rejected | send since 2026-11-24 13:31" {
			t.Errorf("readiness rows %q", rows)
		}
		if sw := eval[[]string](t, ctx, switches); strings.Join(sw, "|") != "missing-info send 28 of the last 30 sent as is (93%), none rejected" {
			t.Errorf("switches %q", sw)
		}
		if ready := eval[string](t, ctx, `getComputedStyle(document.querySelector("#readiness .badge.ready")).backgroundColor`); ready == "" || ready == "rgba(0, 0, 0, 0)" {
			t.Errorf("the ready badge has no colour (%q): the stylesheet did not load", ready)
		}
		shot(t, ctx, dir, "scenarios-autonomy")

		f.Clock.Set(time.Date(2026, 11, 24, 15, 0, 0, 0, time.UTC)) // within the session
		step(t, ctx, "reject the sample",
			chromedp.Navigate(ts.URL+"/conversation/"+sample),
			chromedp.WaitVisible(chromedp.CSS(`details.reject-box summary`)),
			chromedp.Click(chromedp.CSS(`details.reject-box summary`)),
			chromedp.SetValue(chromedp.CSS(`details.reject-box select[name=reason]`), "wrong_tone"),
			chromedp.Click(chromedp.CSS(`details.reject-box button.reject`)),
			chromedp.WaitVisible(chromedp.CSS(`p.flash`)),
		)
		if m := res.ReplyMode(context.Background(), "missing-info", autonomyInbox); m != "draft" {
			t.Fatalf("the next message after the rejection: %s, want draft", m)
		}
		step(t, ctx, "open scenarios", chromedp.Navigate(ts.URL+"/scenarios"), chromedp.WaitVisible(chromedp.ID("readiness")))
		rows = eval[[]string](t, ctx, rowText)
		if len(rows) != 2 || rows[0] != "missing-info | support@example.com/INBOX | 31 | 27 | 2 | 1 | 0 | 90% | not yet 1 rejected among the last 30 reviewed drafts | draft since 2026-11-24 15:00" {
			t.Errorf("readiness rows after the rejection %q", rows)
		}
		if sw := eval[[]string](t, ctx, switches); strings.Join(sw, "|") != "missing-info draft 1 rejected among the last 30 reviewed drafts|missing-info send 28 of the last 30 sent as is (93%), none rejected" {
			t.Errorf("switches after the fall back %q", sw)
		}
		shot(t, ctx, dir, "scenarios-fallback")
	})
}
