package console

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage"

	"triage/internal/ledger"
	"triage/internal/processor"
	"triage/internal/replies"
	"triage/internal/review"
	"triage/internal/testkit/pgtest"
)

// autonomyInbox is the fixture's inbox.
var autonomyInbox = triage.Inbox{Account: "support@example.com", Mailbox: "INBOX"}

// earnAutonomy plays a scenario's history through the resolver watch uses:
// 30 missing-info drafts reviewed (28 sent as is, 2 edited) make it ready,
// the next message switches it to sending, nine are sent, and the tenth is
// drafted as a sample, waiting for review. It returns the resolver and the
// sample's ref.
func (f *fixture) earnAutonomy(t *testing.T) (*review.Resolver, string) {
	t.Helper()
	ctx := context.Background()
	res, err := review.NewResolver(review.ResolverConfig{Store: review.Of(f.Ledger)})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	uid := uint32(200)
	next := func(state ledger.State, from string) email {
		uid++
		at = at.Add(7 * time.Minute)
		f.Clock.Set(at)
		e := email{uid: uid, messageID: fmt.Sprintf("<ask-%d@example.com>", uid), from: from, subject: "Question",
			text: "Where do I find the serial number?", scenario: "missing-info", state: state,
			outcome: &processor.Outcome{Scenario: "missing-info", Status: triage.StatusDrafted}}
		return e
	}
	for i := range 30 {
		e := next(ledger.StateDrafted, fmt.Sprintf("asker%d@example.com", i))
		e.draft = "Please send us the serial number from the sticker under the kettle."
		key := f.email(t, e)
		outcome, sim := replies.DraftSentAsIs, 0.98
		if i == 7 || i == 22 {
			outcome, sim = replies.DraftEdited, 0.6
		}
		if _, err := review.Of(f.Ledger).ResolveDraft(ctx, key, outcome, sim, ""); err != nil {
			t.Fatal(err)
		}
	}
	sample := ""
	for i := range 10 {
		f.Clock.Set(at.Add(time.Minute))
		mode := res.ReplyMode(ctx, "missing-info", autonomyInbox)
		e := next(ledger.StateReplied, fmt.Sprintf("later%d@example.com", i))
		if mode == triage.ReplyDraft {
			e.state, e.draft = ledger.StateDrafted, "Please send us the serial number from the sticker under the kettle."
			sample = f.email(t, e).Ref()
			continue
		}
		e.outcome.Status, e.reply = triage.StatusReplied, "Please send us the serial number from the sticker under the kettle."
		f.email(t, e)
	}
	if sample == "" {
		t.Fatal("no message of the ten was drafted as a sample")
	}
	return res, sample
}

// cellsOf lists the text of the cells of each row of the table with id.
func cellsOf(body, id string) [][]string {
	i := strings.Index(body, `id="`+id+`"`)
	if i < 0 {
		return nil
	}
	table := body[i : i+strings.Index(body[i:], "</table>")]
	table = table[strings.Index(table, "<tbody>"):]
	var rows [][]string
	cell := regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`)
	tag := regexp.MustCompile(`<[^>]+>`)
	for _, tr := range strings.Split(table, "<tr>")[1:] {
		var row []string
		for _, m := range cell.FindAllStringSubmatch(tr, -1) {
			row = append(row, strings.Join(strings.Fields(tag.ReplaceAllString(m[1], "")), " "))
		}
		rows = append(rows, row)
	}
	return rows
}

// The scenarios page shows, per scenario and inbox, whether it is ready to
// send on its own under the configured bar, the mode auto is in, and every
// switch with its figures; a rejection in the console shows at once.
func TestScenariosReadiness(t *testing.T) {
	f := newFixture(t)
	res, sample := f.earnAutonomy(t)
	_, ts := f.server(t, nil)
	page := func() string {
		t.Helper()
		resp, body := do(t, ts.URL, req{path: "/scenarios", header: bearer})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /scenarios: %d", resp.StatusCode)
		}
		return body
	}
	body := page()
	if !strings.Contains(body, "at least 30 reviewed drafts; of the last 30, at least 90% sent as is and none rejected") {
		t.Error("the page does not state the bar")
	}
	want := [][]string{
		{"missing-info", "support@example.com/INBOX", "30", "28", "2", "0", "0", "93%", "ready 28 of the last 30 sent as is (93%), none rejected", "send since 2026-11-24 13:31"},
		{"valid-warranty", "support@example.com/INBOX", "8", "6", "2", "0", "0", "75%", "not yet 8 of 30 reviewed drafts needed", "-"},
	}
	if diff := cmp.Diff(want, cellsOf(body, "readiness")); diff != "" {
		t.Errorf("readiness (-want +got):\n%s", diff)
	}
	toSend := []string{"2026-11-24 13:31", "missing-info", "support@example.com/INBOX", "send", "30", "28", "2", "0", "0", "93%", "30 / 90%", "28 of the last 30 sent as is (93%), none rejected"}
	if diff := cmp.Diff([][]string{toSend}, cellsOf(body, "switches")); diff != "" {
		t.Errorf("switches (-want +got):\n%s", diff)
	}

	// The sample is rejected in the console: not ready at once; the next
	// message watch decides switches back to draft, recorded.
	f.Clock.Set(time.Date(2026, 11, 24, 15, 0, 0, 0, time.UTC)) // within the session
	if resp, _ := do(t, ts.URL, req{method: "POST", path: "/conversation/" + sample + "/reject", form: url.Values{"reason": {"wrong_tone"}}, header: bearer}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("reject the sample: %d", resp.StatusCode)
	}
	row := cellsOf(page(), "readiness")[0]
	if row[5] != "1" || row[8] != "not yet 1 rejected among the last 30 reviewed drafts" || !strings.HasPrefix(row[9], "send") {
		t.Errorf("after the rejection: %q", row)
	}
	if m := res.ReplyMode(context.Background(), "missing-info", autonomyInbox); m != triage.ReplyDraft {
		t.Fatalf("next message after the rejection: %s, want draft", m)
	}
	body = page()
	if row := cellsOf(body, "readiness")[0]; row[9] != "draft since 2026-11-24 15:00" {
		t.Errorf("auto mode after the fall back: %q", row[9])
	}
	sw := cellsOf(body, "switches")
	toDraft := []string{"2026-11-24 15:00", "missing-info", "support@example.com/INBOX", "draft", "30", "27", "2", "1", "0", "90%", "30 / 90%", "1 rejected among the last 30 reviewed drafts"}
	if diff := cmp.Diff([][]string{toDraft, toSend}, sw); diff != "" {
		t.Errorf("switches after the fall back (-want +got):\n%s", diff)
	}

	// Another bar (autonomy.* of the configuration) judges the same figures.
	s, err := New(Config{Ledger: f.Ledger, Token: testToken, Now: f.Clock.Now, Autonomy: review.Thresholds{MinReviewed: 5, MinSentAsIs: 50, SampleEvery: 10}})
	if err != nil {
		t.Fatal(err)
	}
	rec := &respRecorder{header: http.Header{}}
	r, _ := http.NewRequest("GET", "/scenarios", nil)
	r.Header.Set("Authorization", "Bearer "+testToken)
	s.ServeHTTP(rec, r)
	if got := cellsOf(rec.body.String(), "readiness"); len(got) != 2 || got[1][8] != "ready 4 of the last 5 sent as is (80%), none rejected" {
		t.Errorf("valid-warranty under a 5-draft, 50%% bar: %q", got)
	}
	if _, err := New(Config{Ledger: f.Ledger, Token: testToken, Autonomy: review.Thresholds{MinReviewed: 30, MinSentAsIs: 190}}); err == nil {
		t.Error("New accepted a bar of 190%")
	}
}

type respRecorder struct {
	header http.Header
	code   int
	body   strings.Builder
}

func (r *respRecorder) Header() http.Header         { return r.header }
func (r *respRecorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *respRecorder) WriteHeader(code int)        { r.code = code }

// The console works the same over the shared PostgreSQL store as over the
// SQLite files: the queue, approving a draft (sent, recorded on the
// ticket), rejecting one, and the scenarios page's readiness and switches.
func TestConsoleOnStores(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		f := newFixtureOn(t, target)
		out, err := replies.NewOutbox(filepath.Join(f.Dir, "outbox"))
		if err != nil {
			t.Fatal(err)
		}
		_, sample := f.earnAutonomy(t)
		_, ts := f.server(t, out)
		_, body := do(t, ts.URL, req{path: "/queue", header: bearer})
		if diff := cmp.Diff([]string{f.Draft, f.Hostile, f.Owned, f.Escalated, sample}, refsIn(body)); diff != "" {
			t.Errorf("queue (-want +got):\n%s", diff)
		}
		resp, _ := do(t, ts.URL, req{method: "POST", path: "/conversation/" + f.Draft + "/approve", form: url.Values{}, header: bearer})
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("approve: %d", resp.StatusCode)
		}
		d := draftRow(t, f)
		if d.State != replies.DraftSentByPerson || d.Outcome != replies.DraftSentAsIs {
			t.Errorf("approved draft: state %q outcome %q", d.State, d.Outcome)
		}
		if files, _ := filepath.Glob(filepath.Join(f.Dir, "outbox", "*.eml")); len(files) != 1 {
			t.Errorf("outbox holds %d replies, want 1", len(files))
		}
		if st, err := f.Tickets.Get(context.Background(), f.DraftTicket); err != nil || !st.Has(d.MessageID) {
			t.Errorf("ticket does not record the sent reply: %v", err)
		}
		if resp, _ := do(t, ts.URL, req{method: "POST", path: "/conversation/" + sample + "/reject", form: url.Values{"reason": {"wrong_tone"}}, header: bearer}); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("reject: %d", resp.StatusCode)
		}
		_, body = do(t, ts.URL, req{path: "/scenarios", header: bearer})
		rd := cellsOf(body, "readiness")
		if len(rd) != 2 || rd[0][8] != "not yet 1 rejected among the last 30 reviewed drafts" || rd[1][2] != "9" {
			t.Errorf("readiness: %q", rd)
		}
		if sw := cellsOf(body, "switches"); len(sw) != 1 || sw[0][3] != "send" {
			t.Errorf("switches: %q", sw)
		}
		// The rejected sample's customer still waits for a person.
		_, body = do(t, ts.URL, req{path: "/queue", header: bearer})
		if diff := cmp.Diff([]string{f.Hostile, f.Owned, f.Escalated, sample}, refsIn(body)); diff != "" {
			t.Errorf("queue after approve and reject (-want +got):\n%s", diff)
		}
		if !strings.Contains(body, `<span class="badge rejected" title="rejected">draft rejected</span>`) {
			t.Error("the queue does not say the sample's draft was rejected")
		}
		// Dismissed and resolved emails leave the queue; reopened, one
		// comes back. Each decision is recorded with who made it.
		for _, a := range []struct{ ref, action, reason string }{
			{sample, "dismiss", "spam"}, {f.Hostile, "resolve", "answered_elsewhere"}, {sample, "reopen", ""},
		} {
			form := url.Values{"reason": {a.reason}, "note": {"checked"}}
			if resp, body := do(t, ts.URL, req{method: "POST", path: "/conversation/" + a.ref + "/" + a.action, form: form, header: bearer}); resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("%s: %d\n%s", a.action, resp.StatusCode, body)
			}
		}
		_, body = do(t, ts.URL, req{path: "/queue", header: bearer})
		if diff := cmp.Diff([]string{f.Owned, f.Escalated, sample}, refsIn(body)); diff != "" {
			t.Errorf("queue after dismiss, resolve and reopen (-want +got):\n%s", diff)
		}
		_, body = do(t, ts.URL, req{path: "/conversation/" + f.Hostile, header: bearer})
		if !strings.Contains(body, "answered elsewhere · by") || !strings.Contains(body, `class="reopen"`) {
			t.Error("the resolved email's page does not say who resolved it why, or offers no reopen")
		}
		// A reason is required, and only the offered ones.
		for _, reason := range []string{"", "because"} {
			resp, _ := do(t, ts.URL, req{method: "POST", path: "/conversation/" + f.Owned + "/dismiss", form: url.Values{"reason": {reason}}, header: bearer})
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("dismiss with reason %q: %d, want 400", reason, resp.StatusCode)
			}
		}
		if resp, _ := do(t, ts.URL, req{method: "POST", path: "/conversation/" + f.Owned + "/reopen", form: url.Values{}, header: bearer}); resp.StatusCode != http.StatusConflict {
			t.Errorf("reopen of an open email: %d, want 409", resp.StatusCode)
		}
	})
}
