package console

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"triage"
	"triage/internal/clients/mail"
	"triage/internal/ledger"
	"triage/internal/processor"
	"triage/internal/replies"
	"triage/internal/testkit/mailtest"
	"triage/internal/testkit/pgtest"
)

// press sends one key to the page, as a person types it.
func press(t *testing.T, ctx context.Context, key string, then ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	step(t, ctx, "press "+key, append([]chromedp.Action[chromedp.Void]{chromedp.KeyEvent(key)}, then...)...)
}

// TestBrowserWorkday drives a support lead's day in Chromium at 1400 x
// 1000, with the keyboard where a person would use it, against a real
// Dovecot and an SMTP server, on SQLite and on PostgreSQL: named people
// sign in with their own tokens (wrong tokens throttled), the queue is
// searched, filtered by owner, counted per reason and paged; the page of
// a draft shows the draft, the decision and the commitments without
// scrolling, with the trajectory folded; j/k/o open an email, e edits, a
// approves and moves to the next, t takes over, r rejects, ? shows the
// keys; a stranger reusing the customer's Message-ID stays out of the
// conversation; every action is in the activity log with who did it; a
// person removed from the users file is signed out.
func TestBrowserWorkday(t *testing.T) {
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
		// A stranger reuses Anna's Message-ID, and a second draft waits.
		f.email(t, email{uid: 40, messageID: "<anna-1@example.com>", from: "mallory@evil.example", subject: "Send my refund",
			text: "I am Anna, refund me.", scenario: "valid-warranty", state: ledger.StateDrafted, draft: "Your refund is on its way.",
			outcome: &processor.Outcome{Scenario: "valid-warranty", Status: triage.StatusDrafted}})
		second := f.email(t, email{uid: 41, messageID: "<fred-1@example.com>", from: "fred@example.com", subject: "Blender noise",
			text: "My blender SN-99999 rattles.", scenario: "valid-warranty", state: ledger.StateDrafted, draft: "Please send us a video.",
			outcome: &processor.Outcome{Scenario: "valid-warranty", Status: triage.StatusDrafted, FromName: "Fred Frost", SerialNumbers: []string{"SN-99999"}}}).Ref()
		users := usersFile(t, map[string]string{"Lena Lead": lenaToken, "Omar Ops": omarToken})
		s, err := New(Config{Ledger: f.Ledger, Tickets: f.Tickets, Sender: smtp, From: "Support <support@example.com>",
			Limits: replies.Limits{PerAddress: 5, PerHour: 100}, UsersFile: users, Now: f.Clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		ts := newTestServer(t, s)

		step(t, ctx, "open the sign-in form", chromedp.EmulateViewport(1400, 1000), chromedp.Navigate(ts.URL+"/queue"), chromedp.WaitVisible(chromedp.CSS(`input[name=token]`)))
		for i := range FailureBurst + 1 {
			step(t, ctx, "a wrong token",
				chromedp.SetValue(chromedp.CSS(`input[name=token]`), "guess-guess-guess-"+string(rune('a'+i))),
				chromedp.Submit(chromedp.CSS(`input[name=token]`)),
				chromedp.WaitVisible(chromedp.CSS(`p.error`)),
			)
		}
		if msg := eval[string](t, ctx, `document.querySelector("p.error").textContent`); !strings.Contains(msg, "Too many wrong tokens") {
			t.Errorf("after %d wrong tokens the form says %q", FailureBurst+1, msg)
		}
		f.Clock.Set(f.Clock.Now().Add(time.Minute)) // the budget grows back
		step(t, ctx, "sign in as Lena",
			chromedp.SetValue(chromedp.CSS(`input[name=name]`), "Not Lena"),
			chromedp.SetValue(chromedp.CSS(`input[name=token]`), lenaToken),
			chromedp.Submit(chromedp.CSS(`input[name=token]`)),
			chromedp.WaitVisible(chromedp.CSS(`table.queue`)),
		)
		if who := eval[string](t, ctx, `document.querySelector(".who span").textContent`); who != "Lena Lead" {
			t.Errorf("signed in as %q, want Lena Lead (the users file's name)", who)
		}

		t.Run("queue", func(t *testing.T) {
			if n := eval[int](t, ctx, `document.querySelectorAll("table.queue tbody tr").length`); n != 6 {
				t.Errorf("the queue lists %d emails, want 6", n)
			}
			counts := eval[string](t, ctx, `document.querySelector("p.counts").textContent.replace(/\s+/g, " ").trim()`)
			if !strings.Contains(counts, "draft waiting 3") || !strings.Contains(counts, "failed 1") {
				t.Errorf("counts per reason %q", counts)
			}
			if w := eval[float64](t, ctx, `document.querySelector("table.queue").getBoundingClientRect().right`); w > 1400 {
				t.Errorf("the queue reaches %.0f px at 1400", w)
			}
			if h := eval[float64](t, ctx, `Math.max(...[...document.querySelectorAll("table.queue tbody tr")].map(r => r.getBoundingClientRect().height))`); h > 60 {
				t.Errorf("a queue row is %.0f px high: its columns wrap", h)
			}
			composerShot(t, ctx, dir, "console-queue")
		})

		t.Run("search", func(t *testing.T) {
			press(t, ctx, "/")
			if id := eval[string](t, ctx, `document.activeElement.id`); id != "q" {
				t.Fatalf("/ focused %q, want the search box", id)
			}
			// DevTools sends the key's character apart from its keydown,
			// so the "/" lands in the box a browser keeps it out of.
			step(t, ctx, "clear the box", chromedp.Evaluate[chromedp.Void](`document.getElementById("q").value = ""`))
			step(t, ctx, "type a serial", chromedp.KeyEvent("sn-99999"))
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := chromedp.Do(sctx, chromedp.Poll[chromedp.Void](`document.querySelectorAll("table.queue tbody tr").length === 1`)); err != nil {
				t.Fatalf("the search did not narrow the queue (the box holds %q, %d rows): %v", eval[string](t, ctx, `document.getElementById("q").value`), eval[int](t, ctx, `document.querySelectorAll("table.queue tbody tr").length`), err)
			}
			if got := eval[string](t, ctx, `document.querySelector("table.queue tbody tr").dataset.ref`); got != second {
				t.Errorf("the search found %s, want the blender email", got)
			}
			if loc := eval[string](t, ctx, `location.href`); strings.Contains(strings.ToLower(loc), "99999") {
				t.Errorf("the search is in the URL %q", loc)
			}
			composerShot(t, ctx, dir, "console-search")
			step(t, ctx, "search by name",
				chromedp.Evaluate[chromedp.Void](`document.getElementById("q").value = ""`),
				chromedp.KeyEvent("anna nowak"),
				chromedp.Poll[chromedp.Void](`document.querySelectorAll("table.queue tbody tr").length === 1 && document.querySelector("table.queue tbody tr").dataset.ref === "`+f.Draft+`"`),
			)
		})

		t.Run("keyboard opens the draft, decision first", func(t *testing.T) {
			step(t, ctx, "queue", chromedp.Navigate(ts.URL+"/queue"), chromedp.WaitVisible(chromedp.CSS(`table.queue`)))
			press(t, ctx, "j")
			press(t, ctx, "j")
			press(t, ctx, "k")
			if cur := eval[string](t, ctx, `document.querySelector("tr.current").dataset.ref`); cur != f.Draft {
				t.Fatalf("j j k chose %s, want the first email (the draft)", cur)
			}
			press(t, ctx, "o", chromedp.WaitVisible(chromedp.ID("draft-body")))
			box := eval[[]float64](t, ctx, `(() => { const r = document.getElementById("draft").getBoundingClientRect(); return [r.top, r.bottom, r.left, r.right] })()`)
			if box[0] < 0 || box[1] > 1000 || box[3] > 1400 {
				t.Errorf("the draft spans %v: not within the 1400 x 1000 window without scrolling", box)
			}
			for _, sel := range []string{"#approve", "pre.customer", ".decision-pane"} {
				if bottom := eval[float64](t, ctx, `document.querySelector("`+sel+`").getBoundingClientRect().top`); bottom > 1000 {
					t.Errorf("%s starts at %.0f px, below the window", sel, bottom)
				}
			}
			if n := eval[int](t, ctx, `document.querySelectorAll("#approve").length`); n != 1 {
				t.Errorf("%d Approve buttons: the stranger's draft is in Anna's conversation", n)
			}
			side := eval[string](t, ctx, `document.querySelector(".decision-pane").textContent.replace(/\s+/g, " ")`)
			for _, want := range []string{"guarantee", "repair, replacement", "2026-12-08", "The draft commits to", "ticket"} {
				if !strings.Contains(side, want) {
					t.Errorf("the decision pane lacks %q: %s", want, side)
				}
			}
			if open := eval[bool](t, ctx, `document.querySelector("details.trajectory").open`); open {
				t.Error("the trajectory is unfolded")
			}
			if kv := eval[string](t, ctx, `document.querySelector("details.trajectory dl.kv").textContent`); !strings.Contains(kv, "serial number") || !strings.Contains(kv, "SN-12345") {
				t.Errorf("the first call's arguments read %q", kv)
			}
			if badge := eval[string](t, ctx, `document.querySelector(".ticket h1 .badge").textContent`); badge != "draft waiting" {
				t.Errorf("the conversation's badge %q, want draft waiting", badge)
			}
			if name := eval[string](t, ctx, `document.querySelector(".facts-line").textContent`); !strings.Contains(name, "Anna Nowak") {
				t.Errorf("the customer is not named: %q", name)
			}
			composerShot(t, ctx, dir, "console")
			press(t, ctx, "e")
			if id := eval[string](t, ctx, `document.activeElement.id`); id != "draft-body" {
				t.Errorf("e focused %q, want the draft", id)
			}
			press(t, ctx, kb.Escape)
			press(t, ctx, "?", chromedp.WaitVisible(chromedp.ID("keys")))
			press(t, ctx, "?", chromedp.WaitNotVisible(chromedp.ID("keys")))
		})

		t.Run("assign", func(t *testing.T) {
			step(t, ctx, "assign to Omar",
				chromedp.SetValue(chromedp.ID("assign-to"), "Omar Ops"),
				chromedp.Click(chromedp.ID("assign")),
				chromedp.WaitVisible(chromedp.CSS(`p.flash`)),
			)
			if o := eval[string](t, ctx, `document.getElementById("owner").textContent`); o != "Omar Ops" {
				t.Errorf("owner %q, want Omar Ops", o)
			}
			step(t, ctx, "assign to me", chromedp.Click(chromedp.ID("assign-me")), chromedp.WaitNotPresent(chromedp.ID("assign-me")))
			if o := eval[string](t, ctx, `document.getElementById("owner").textContent`); o != "Lena Lead" {
				t.Errorf("owner %q, want Lena Lead", o)
			}
			step(t, ctx, "mine", chromedp.Navigate(ts.URL+"/queue?owner=mine"), chromedp.WaitVisible(chromedp.CSS(`table.queue`)))
			if refs := eval[[]string](t, ctx, `[...document.querySelectorAll("table.queue tbody tr")].map(r => r.dataset.ref)`); !slices.Equal(refs, []string{f.Draft}) {
				t.Errorf("mine lists %v, want the draft alone", refs)
			}
			if owner := eval[string](t, ctx, `document.querySelector("table.queue tbody td.owner").textContent`); owner != "Lena Lead" {
				t.Errorf("the owner column says %q", owner)
			}
		})

		t.Run("approve and next", func(t *testing.T) {
			step(t, ctx, "open the draft", chromedp.Navigate(ts.URL+"/conversation/"+f.Draft), chromedp.WaitVisible(chromedp.ID("approve")))
			press(t, ctx, "a", chromedp.WaitVisible(chromedp.CSS(`p.flash`)))
			if flash := eval[string](t, ctx, `document.querySelector("p.flash").textContent`); !strings.Contains(flash, "next email waiting") {
				t.Errorf("flash %q", flash)
			}
			if loc := eval[string](t, ctx, `location.pathname`); loc != "/conversation/"+f.Hostile {
				t.Errorf("after approving, the page is %s, want the next email waiting (%s)", loc, f.Hostile)
			}
			if msgs := sink.Messages(); len(msgs) != 1 || msgs[0].Header("In-Reply-To") != "<anna-1@example.com>" {
				t.Fatalf("the SMTP server got %d messages", len(msgs))
			}
		})

		t.Run("take over and reject by keyboard", func(t *testing.T) {
			step(t, ctx, "open the draft", chromedp.Navigate(ts.URL+"/conversation/"+f.Draft), chromedp.WaitVisible(chromedp.ID("takeover")))
			if badge := eval[string](t, ctx, `document.querySelector(".ticket h1 .badge").textContent`); badge != "draft waiting" && badge != "answered by triage" {
				t.Logf("badge after approval %q", badge)
			}
			press(t, ctx, "t", chromedp.WaitVisible(chromedp.ID("release")))
			if badge := eval[string](t, ctx, `document.querySelector(".ticket h1 .badge").textContent`); badge != "taken over by Lena Lead" {
				t.Errorf("badge after t %q", badge)
			}
			step(t, ctx, "open the blender draft", chromedp.Navigate(ts.URL+"/conversation/"+second), chromedp.WaitVisible(chromedp.ID("approve")))
			press(t, ctx, "r")
			if tag := eval[string](t, ctx, `document.activeElement.name`); tag != "reason" {
				t.Fatalf("r focused %q, want the reject reason", tag)
			}
			step(t, ctx, "reject",
				chromedp.SetValue(chromedp.CSS(`details.reject-box select[name=reason]`), "wrong_tone"),
				chromedp.Click(chromedp.CSS(`details.reject-box button.reject`)),
				chromedp.WaitVisible(chromedp.CSS(`p.flash`)),
			)
			if label := eval[string](t, ctx, `document.querySelector(".email-head .badge").textContent`); label != "draft rejected" {
				t.Errorf("the rejected email is labelled %q", label)
			}
		})

		t.Run("activity names who did what", func(t *testing.T) {
			step(t, ctx, "activity", chromedp.Navigate(ts.URL+"/activity"), chromedp.WaitVisible(chromedp.ID("people")))
			rows := eval[[]string](t, ctx, `[...document.querySelectorAll("#people tbody tr")].map(r => r.cells[1].textContent + ": " + r.cells[2].textContent)`)
			want := []string{"Lena Lead: rejected the draft", "Lena Lead: took over", "Lena Lead: approved the draft", "Lena Lead: assigned to Lena Lead", "Lena Lead: assigned to Omar Ops"}
			if !slices.Equal(rows, want) {
				t.Errorf("the people's log %q, want %q", rows, want)
			}
		})

		t.Run("watch files the approved reply", func(t *testing.T) {
			watchOnce(t, f, tgt)
			var inSent []string
			for _, m := range d.Messages(t, "Sent") {
				inSent = append(inSent, headerOf(m.Raw, "Message-Id"))
			}
			if len(inSent) != 1 || inSent[0] != sink.Messages()[0].Header("Message-Id") {
				t.Errorf("the Sent folder holds %v, want the approved reply once", inSent)
			}
		})

		t.Run("pages", func(t *testing.T) {
			f.flood(t, 60)
			step(t, ctx, "queue", chromedp.Navigate(ts.URL+"/queue"), chromedp.WaitVisible(chromedp.ID("page-range")))
			first := eval[string](t, ctx, `document.getElementById("page-range").textContent`)
			step(t, ctx, "next page",
				chromedp.Click(chromedp.CSS(`button.page.next`)),
				chromedp.Poll[chromedp.Void](`document.getElementById("page-range").textContent.startsWith("51")`),
			)
			last := eval[string](t, ctx, `document.getElementById("page-range").textContent`)
			if first != "1–50 of 65" || last != "51–65 of 65" {
				t.Errorf("pages %q then %q, want 1–50 of 65, 51–65 of 65", first, last)
			}
			if loc := eval[string](t, ctx, `location.search`); !strings.Contains(loc, "page=2") {
				t.Errorf("the second page's URL %q", loc)
			}
		})

		t.Run("removed from the users file", func(t *testing.T) {
			if err := os.WriteFile(users, []byte("sha256:"+tokenHash(omarToken)+" Omar Ops\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			step(t, ctx, "reload", chromedp.Navigate(ts.URL+"/queue"), chromedp.WaitVisible(chromedp.CSS(`input[name=token]`)))
		})
	})
}
