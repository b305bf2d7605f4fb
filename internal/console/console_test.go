package console

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/clients/mail"
	"triage/internal/clients/tickets"
	"triage/internal/ledger"
	"triage/internal/model"
	"triage/internal/processor"
	"triage/internal/replies"
	"triage/internal/testkit/mailtest"
)

// client does not follow redirects: the tests look at them.
var client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

type req struct {
	method, path string
	form         url.Values
	header       map[string]string
	cookie       *http.Cookie
}

func do(t *testing.T, base string, r req) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if r.form != nil {
		body = strings.NewReader(r.form.Encode())
	}
	if r.method == "" {
		r.method = http.MethodGet
	}
	hr, err := http.NewRequest(r.method, base+r.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if r.form != nil {
		hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	if r.cookie != nil {
		hr.AddCookie(r.cookie)
	}
	resp, err := client.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var bearer = map[string]string{"Authorization": "Bearer " + testToken}

func draftRow(t *testing.T, f *fixture) replies.Reply {
	t.Helper()
	es, err := f.Ledger.ByRef(context.Background(), f.Draft)
	if err != nil {
		t.Fatal(err)
	}
	r, err := f.Ledger.Replies().GetReply(context.Background(), es[0].Key)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// refsIn lists the conversation refs linked from a page, in order.
func refsIn(body string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`href="/conversation/([0-9a-f]+)"`).FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestQueue(t *testing.T) {
	f := newFixture(t)
	_, ts := f.server(t, nil)
	tests := []struct {
		query string
		want  []string
	}{
		{"", []string{f.Draft, f.Hostile, f.Owned, f.Escalated}}, // oldest first; the replied email waits for nobody
		{"?reason=draft", []string{f.Draft}},
		{"?reason=human_owner", []string{f.Owned}},
		{"?scenario=general", []string{f.Hostile}},
		{"?inbox=support%40example.com%2FINBOX&reason=escalated", []string{f.Escalated}},
		{"?age=1h", nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			f.Clock.Set(f.Clock.Now()) // ages relative to the fixture's clock
			resp, body := do(t, ts.URL, req{path: "/queue" + tt.query, header: bearer})
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if diff := cmp.Diff(tt.want, refsIn(body)); diff != "" {
				t.Errorf("queue (-want +got):\n%s", diff)
			}
		})
	}
}

// The queue shows each complaint's time left to answer it, an overdue one
// marked; sort=due puts the complaints first, the soonest deadline first.
func TestQueueComplaintDeadlines(t *testing.T) {
	f := newFixture(t)
	_, ts := f.server(t, nil)
	_, body := do(t, ts.URL, req{path: "/queue?sort=due", header: bearer})
	if diff := cmp.Diff([]string{f.Owned, f.Draft, f.Hostile, f.Escalated}, refsIn(body)); diff != "" {
		t.Errorf("queue?sort=due (-want +got):\n%s", diff)
	}
	for _, want := range []string{`title="2026-11-26 08:10">47h left</span>`, `title="2026-12-08 08:00">13d left</span>`, `<option value="due" selected>`} {
		if !strings.Contains(body, want) {
			t.Errorf("queue?sort=due lacks %q", want)
		}
	}
	f.Clock.Set(time.Date(2026, 11, 27, 8, 10, 0, 0, time.UTC)) // a day past the follow-up's conversation's deadline
	_, body = do(t, ts.URL, req{path: "/queue", header: bearer})
	if !strings.Contains(body, `<span class="due overdue" title="2026-11-26 08:10">overdue 24h</span>`) {
		t.Errorf("queue does not mark the overdue complaint:\n%s", body)
	}
	if diff := cmp.Diff([]string{f.Draft, f.Hostile, f.Owned, f.Escalated}, refsIn(body)); diff != "" {
		t.Errorf("queue without sort: oldest first (-want +got):\n%s", diff)
	}
}

// TestQueueShowsTheFiltersInForce: a filter whose value nothing waiting has
// (a bookmarked inbox whose queue is empty) is shown chosen, and the empty
// list says the filters hid it, not that nothing waits; an age that is not
// a choice is no filter, as the page shows.
func TestQueueShowsTheFiltersInForce(t *testing.T) {
	f := newFixture(t)
	_, ts := f.server(t, nil)
	_, body := do(t, ts.URL, req{path: "/queue?inbox=other%40example.com&scenario=gone", header: bearer})
	for _, want := range []string{"<option selected>other@example.com</option>", "<option selected>gone</option>", "Nothing waiting matches these filters.", "0 of 4"} {
		if !strings.Contains(body, want) {
			t.Errorf("queue filtered to an empty inbox lacks %q", want)
		}
	}
	if refs := refsIn(body); refs != nil {
		t.Errorf("queue filtered to an empty inbox lists %v", refs)
	}
	_, body = do(t, ts.URL, req{path: "/queue?age=zzz", header: bearer})
	if diff := cmp.Diff([]string{f.Draft, f.Hostile, f.Owned, f.Escalated}, refsIn(body)); diff != "" {
		t.Errorf("queue?age=zzz (-want +got):\n%s", diff)
	}
	if strings.Contains(body, "zzz") || strings.Contains(body, "Nothing") {
		t.Errorf("queue?age=zzz names the bad age or says nothing waits:\n%s", body)
	}
}

func TestConversationShowsTrajectoryAndEscapes(t *testing.T) {
	f := newFixture(t)
	_, ts := f.server(t, nil)
	_, body := do(t, ts.URL, req{path: "/conversation/" + f.Draft, header: bearer})
	for _, want := range []string{draftCustomerText, "valid-warranty", "(rules: serial found; warranty words)", "check_warranty",
		"&#34;serial_number&#34;: &#34;SN-12345&#34;", "2100 in, 180 out, 2280 total", f.DraftTicket, "Approve and send as is", "Take over"} {
		if !strings.Contains(body, want) {
			t.Errorf("draft conversation lacks %q", want)
		}
	}
	_, body = do(t, ts.URL, req{path: "/conversation/" + f.Hostile, header: bearer})
	// The model chose the scenario in the email's first turn.
	for _, want := range []string{"(model, first turn: general: not a warranty matter)", "blocked by policy", "recipient_not_allowed", "&lt;script&gt;document.title=&#34;pwned&#34;&lt;/script&gt;Refund",
		"&lt;img src=x onerror=&#34;window.pwned=2&#34;&gt;"} {
		if !strings.Contains(body, want) {
			t.Errorf("hostile conversation lacks %q", want)
		}
	}
	for _, bad := range []string{"<script>document", "<script>alert", "<img src=x"} {
		if strings.Contains(body, bad) {
			t.Errorf("hostile conversation contains unescaped %q", bad)
		}
	}
	if resp, _ := do(t, ts.URL, req{path: "/conversation/0123456789abcdef0123", header: bearer}); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown ref: status %d, want 404", resp.StatusCode)
	}
}

func TestApproveSendsThroughOutboxOnce(t *testing.T) {
	f := newFixture(t)
	out, err := replies.NewOutbox(filepath.Join(f.Dir, "outbox"))
	if err != nil {
		t.Fatal(err)
	}
	_, ts := f.server(t, out)
	c := login(t, ts.URL, "lena")
	resp, _ := do(t, ts.URL, req{method: "POST", path: "/conversation/" + f.Draft + "/approve", form: url.Values{}, cookie: c})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/conversation/"+f.Draft+"?done=sent#top" {
		t.Fatalf("approve: status %d location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, _ = do(t, ts.URL, req{method: "POST", path: "/conversation/" + f.Draft + "/approve", form: url.Values{}, cookie: c})
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("second approve: status %d, want 409", resp.StatusCode)
	}
	files, _ := filepath.Glob(filepath.Join(f.Dir, "outbox", "*.eml"))
	if len(files) != 1 {
		t.Fatalf("outbox holds %d replies, want 1", len(files))
	}
	raw, _ := os.ReadFile(files[0])
	d := draftRow(t, f)
	for _, want := range []string{"In-Reply-To: <anna-1@example.com>", "Message-Id: " + d.MessageID, "To: <anna@example.com>", "SN-12345 is under warranty"} {
		if !bytes.Contains(raw, []byte(want)) {
			t.Errorf("sent reply lacks %q:\n%s", want, raw)
		}
	}
	if bytes.Contains(raw, []byte("X-Unsent")) {
		t.Error("sent reply still carries X-Unsent")
	}
	got := struct{ State, Outcome string }{string(d.State), d.Outcome}
	if diff := cmp.Diff(struct{ State, Outcome string }{string(replies.DraftSentByPerson), replies.DraftSentAsIs}, got); diff != "" {
		t.Errorf("draft row (-want +got):\n%s", diff)
	}
	st, err := f.Tickets.Get(context.Background(), f.DraftTicket)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Has(d.MessageID) {
		t.Errorf("ticket %s does not record the sent reply %s", f.DraftTicket, d.MessageID)
	}
}

func TestDraftActions(t *testing.T) {
	tests := []struct {
		name        string
		action      string
		form        url.Values
		wantOutcome string
		wantSent    string // text the outbox reply holds; "" none sent
	}{
		{"edit and send", "send", url.Values{"body": {"Hello Anna,\n\nwe will replace the kettle.\n\nSupport"}}, replies.DraftEdited, "we will replace the kettle"},
		{"edit one word stays as is", "send", url.Values{"body": {strings.Replace(draftBody, "opened", "created", 1)}}, replies.DraftSentAsIs, "We created ticket"},
		{"reject", "reject", url.Values{"reason": {"wrong_facts"}, "note": {"the warranty ended in May"}}, replies.DraftRejected, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			out, err := replies.NewOutbox(filepath.Join(f.Dir, "outbox"))
			if err != nil {
				t.Fatal(err)
			}
			_, ts := f.server(t, out)
			resp, _ := do(t, ts.URL, req{method: "POST", path: "/conversation/" + f.Draft + "/" + tt.action, form: tt.form, header: bearer})
			if resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if got := draftRow(t, f).Outcome; got != tt.wantOutcome {
				t.Errorf("outcome %q, want %q", got, tt.wantOutcome)
			}
			files, _ := filepath.Glob(filepath.Join(f.Dir, "outbox", "*.eml"))
			switch {
			case tt.wantSent == "" && len(files) != 0:
				t.Errorf("outbox holds %d replies, want none", len(files))
			case tt.wantSent != "" && len(files) != 1:
				t.Fatalf("outbox holds %d replies, want 1", len(files))
			case tt.wantSent != "":
				raw, _ := os.ReadFile(files[0])
				if !bytes.Contains(raw, []byte(tt.wantSent)) {
					t.Errorf("sent reply lacks %q", tt.wantSent)
				}
			}
		})
	}
}

func TestSendRefusals(t *testing.T) {
	f := newFixture(t)
	_, ts := f.server(t, nil) // no sender
	resp, body := do(t, ts.URL, req{method: "POST", path: "/conversation/" + f.Draft + "/approve", form: url.Values{}, header: bearer})
	if resp.StatusCode != http.StatusConflict || !strings.Contains(body, "no SMTP server or outbox") {
		t.Errorf("approve without a sender: status %d", resp.StatusCode)
	}
	if r := draftRow(t, f); r.State != replies.DraftStored || r.Outcome != "" {
		t.Errorf("draft %s/%q after a refused send, want it waiting", r.State, r.Outcome)
	}
	resp, _ = do(t, ts.URL, req{method: "POST", path: "/conversation/" + f.Draft + "/send", form: url.Values{"body": {"  "}}, header: bearer})
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("empty edit: status %d, want 400", resp.StatusCode)
	}
	out, err := replies.NewOutbox(filepath.Join(f.Dir, "outbox"))
	if err != nil {
		t.Fatal(err)
	}
	_, ts = f.server(t, out)
	resp, _ = do(t, ts.URL, req{method: "POST", path: "/conversation/" + f.Replied + "/approve", form: url.Values{}, header: bearer})
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("approve a sent reply: status %d, want 404 (no draft)", resp.StatusCode)
	}
}

func TestTakeoverReleaseAndNote(t *testing.T) {
	f := newFixture(t)
	_, ts := f.server(t, nil)
	c := login(t, ts.URL, "Lena Lead")
	ctx := context.Background()
	post := func(action string, form url.Values) {
		t.Helper()
		resp, body := do(t, ts.URL, req{method: "POST", path: "/conversation/" + f.Draft + "/" + action, form: form, cookie: c})
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s: status %d: %s", action, resp.StatusCode, body)
		}
	}
	post("takeover", url.Values{})
	st, _ := f.Tickets.Get(ctx, f.DraftTicket)
	if !st.AgentDisabled || st.Owner != "Lena Lead" {
		t.Errorf("after takeover: agent_disabled %v owner %q", st.AgentDisabled, st.Owner)
	}
	_, body := do(t, ts.URL, req{path: "/conversation/" + f.Draft + "?done=takeover", cookie: c})
	if !strings.Contains(body, "taken over by Lena Lead") || !strings.Contains(body, "You took the conversation over") {
		t.Error("conversation page does not show the takeover")
	}
	post("release", url.Values{})
	if st, _ = f.Tickets.Get(ctx, f.DraftTicket); st.AgentDisabled {
		t.Error("after release: still taken over")
	}
	post("note", url.Values{"text": {"Called the customer <b>back</b>."}})
	st, _ = f.Tickets.Get(ctx, f.DraftTicket)
	if len(st.Notes) != 1 || st.Notes[0].Text != "Called the customer <b>back</b>." || st.Notes[0].From != "Lena Lead (console)" {
		t.Fatalf("notes %+v", st.Notes)
	}
	_, body = do(t, ts.URL, req{path: "/conversation/" + f.Draft, cookie: c})
	if !strings.Contains(body, "Called the customer &lt;b&gt;back&lt;/b&gt;.") {
		t.Error("note not shown escaped")
	}
	resp, _ := do(t, ts.URL, req{method: "POST", path: "/conversation/" + f.Hostile + "/takeover", form: url.Values{}, cookie: c})
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("takeover of an email without a ticket: status %d, want 409", resp.StatusCode)
	}
}

func TestScenarios(t *testing.T) {
	f := newFixture(t)
	s, _ := f.server(t, nil)
	v, err := s.scenariosOf(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rows := v.Rows
	type fig struct {
		Name                                      string
		Volume, Replied, Drafted, Failed, Skipped int
		Other, SentAsIs, Edited, Pending, Weeks   int
	}
	var got []fig
	for _, r := range rows {
		got = append(got, fig{r.Name, r.Volume, r.Replied, r.Drafted, r.Failed, r.Skipped, r.Other, r.SentAsIs, r.Edited, r.Pending, len(r.Weeks)})
	}
	want := []fig{
		{Name: "expired-warranty", Volume: 1, Replied: 1},
		{Name: "general", Volume: 1, Failed: 1},
		{Name: "safety", Volume: 1, Replied: 1},
		{Name: "valid-warranty", Volume: 10, Drafted: 9, Other: 1, SentAsIs: 6, Edited: 2, Pending: 1, Weeks: 4},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scenario figures (-want +got):\n%s", diff)
	}
}

// TestScenariosUsageAndCost: the scenarios page sums the usage the ledger
// kept per month and scenario, per email, and prices it when prices are
// configured; a model without a price shows no cost and is named.
func TestScenariosUsageAndCost(t *testing.T) {
	f := newFixture(t)
	s, err := New(Config{Ledger: f.Ledger, Tickets: f.Tickets, Token: testToken, Now: f.Clock.Now,
		Prices: model.Prices{"gemini-2.5-flash": {Input: 0.30, CachedInput: 0.03, Output: 2.50}}})
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.scenariosOf(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var vw *usageRow
	for i, r := range v.Usage {
		if r.Scenario == "valid-warranty" {
			vw = &v.Usage[i]
		}
	}
	// Ten handled valid-warranty messages, nine of them drafted; one
	// made the three model calls.
	want := (600*0.30 + 1500*0.03 + 180*2.50) / 1e6
	if vw == nil || vw.Emails != 10 || vw.Resolved != 9 || vw.CallsPerEmail != 0.3 || vw.PromptPerEmail != 210 || vw.CachedShare != 1500.0/2100 ||
		!vw.HasCost || math.Abs(vw.Cost-want) > 1e-12 || math.Abs(vw.CostPer1000-100*want) > 1e-9 || math.Abs(vw.CostPerResolved-want/9) > 1e-12 {
		t.Errorf("valid-warranty usage %+v; want 10 emails, 0.3 calls and 210 prompt tokens per email, cost %g", vw, want)
	}
	if !v.Priced || len(v.Unpriced) != 1 || v.Unpriced[0] != "(none)" {
		t.Errorf("priced %v, unpriced %q; want the general scenario's model (none named) unpriced", v.Priced, v.Unpriced)
	}
	_, ts := f.server(t, nil)
	_, body := do(t, ts.URL, req{path: "/scenarios", header: bearer})
	if !strings.Contains(body, `id="usage"`) || !strings.Contains(body, "<td>0.30</td><td>210</td><td>71%</td><td>18</td>") || !strings.Contains(body, "Add <code>prices:</code>") {
		t.Errorf("scenarios page without prices lacks the usage table or the hint:\n%s", body)
	}
}

func TestActivitySearch(t *testing.T) {
	f := newFixture(t)
	_, ts := f.server(t, nil)
	tests := []struct {
		query string
		want  []string
	}{
		{"?q=mallory", []string{f.Hostile}},
		{"?q=TOASTER", []string{f.Owned}},
		{"?q=%25", nil}, // a LIKE wildcard is a plain character
		{"?state=replied", []string{f.Escalated, f.Replied}},
		{"?q=dora&state=replied", []string{f.Escalated}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			form, _ := url.ParseQuery(strings.TrimPrefix(tt.query, "?"))
			_, body := do(t, ts.URL, req{method: "POST", path: "/activity", form: form, header: bearer})
			if diff := cmp.Diff(tt.want, refsIn(body)); diff != "" {
				t.Errorf("activity (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNoCustomerContentInLogs runs every page and action with debug logs
// and looks for the customers' words in them.
func TestNoCustomerContentInLogs(t *testing.T) {
	f := newFixture(t)
	var logs bytes.Buffer
	out, err := replies.NewOutbox(filepath.Join(f.Dir, "outbox"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Ledger: f.Ledger, Tickets: f.Tickets, Sender: out, Token: testToken, Now: f.Clock.Now,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	for _, r := range []req{
		{path: "/queue?scenario=valid-warranty"}, {path: "/queue"}, {path: "/activity"}, {method: "POST", path: "/activity", form: url.Values{"q": {"anna@example.com"}}}, {path: "/scenarios"},
		{path: "/conversation/" + f.Draft}, {path: "/conversation/" + f.Hostile},
		{method: "POST", path: "/conversation/" + f.Draft + "/send", form: url.Values{"body": {"Edited for anna@example.com"}}},
		{method: "POST", path: "/conversation/" + f.Draft + "/note", form: url.Values{"text": {"x"}}},
	} {
		r.header = bearer
		if resp, body := do(t, ts.URL, r); resp.StatusCode >= 400 {
			t.Errorf("%s %s: status %d: %s", r.method, r.path, resp.StatusCode, body)
		}
	}
	if logs.Len() == 0 {
		t.Fatal("no logs written")
	}
	for _, secret := range []string{"anna@example.com", "mallory", "Kettle", "kettle", "script", "SN-12345", testToken} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("logs contain %q:\n%s", secret, logs.String())
		}
	}
}

func TestRetry(t *testing.T) {
	f := newFixture(t)
	_, ts := f.server(t, nil)
	_, body := do(t, ts.URL, req{path: "/conversation/" + f.Hostile, header: bearer})
	if !strings.Contains(body, `id="retry"`) {
		t.Error("the failed email offers no retry")
	}
	tests := []struct {
		name string
		ref  string
		want int
	}{
		{"failed email", f.Hostile, http.StatusSeeOther},
		{"asked twice", f.Hostile, http.StatusConflict},
		{"a drafted email", f.Draft, http.StatusConflict},
		{"a follow-up a person owns", f.Owned, http.StatusConflict},
	}
	for _, tt := range tests {
		resp, _ := do(t, ts.URL, req{method: "POST", path: "/conversation/" + tt.ref + "/retry", form: url.Values{}, header: bearer})
		if resp.StatusCode != tt.want {
			t.Errorf("%s: status %d, want %d", tt.name, resp.StatusCode, tt.want)
		}
	}
	es, err := f.Ledger.ByRef(context.Background(), f.Hostile)
	if err != nil {
		t.Fatal(err)
	}
	if es[0].State != ledger.StateRetryRequested {
		t.Errorf("state %q, want %q", es[0].State, ledger.StateRetryRequested)
	}
	_, body = do(t, ts.URL, req{path: "/queue?reason=retry_requested", header: bearer})
	if diff := cmp.Diff([]string{f.Hostile}, refsIn(body)); diff != "" {
		t.Errorf("queue of retries (-want +got):\n%s", diff)
	}
}

// TestEscalationLeavesQueue: an escalation waits for a person until its
// ticket is given back or a person's reply is recorded on it.
func TestEscalationLeavesQueue(t *testing.T) {
	f := newFixture(t)
	_, ts := f.server(t, nil)
	ctx := context.Background()
	tk, err := f.Tickets.Create(ctx, tickets.Request{CustomerEmail: "fred@example.com", IdempotencyKey: "k9", MessageID: "<fred-1@example.com>"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Tickets.Takeover(ctx, tk.TicketID, "staff"); err != nil {
		t.Fatal(err)
	}
	ref := f.email(t, email{uid: 9, messageID: "<fred-1@example.com>", from: "fred@example.com", subject: "Sparks",
		text: "It sparks.", scenario: "safety", state: ledger.StateReplied,
		outcome: &processor.Outcome{Scenario: "safety", Status: triage.StatusReplied, Escalated: true, TicketID: tk.TicketID}}).Ref()

	queued := func() bool {
		_, body := do(t, ts.URL, req{path: "/queue?reason=escalated", header: bearer})
		return strings.Contains(body, ref)
	}
	if !queued() {
		t.Fatal("a fresh escalation is not in the queue")
	}
	if err := f.Tickets.AddMessage(ctx, tk.TicketID, tickets.Message{MessageID: "<staff-1@example.com>", Direction: tickets.Outbound, From: "staff@example.com", At: f.Clock.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if queued() {
		t.Error("an escalation a person answered is still in the queue")
	}
}

// An escalation watch moved to Needs-Human (needs_human, reason escalated)
// is listed once, as an escalation, and leaves the queue once a person
// answered, as an escalation left in place does.
func TestEscalationInNeedsHumanListedOnce(t *testing.T) {
	f := newFixture(t)
	_, ts := f.server(t, nil)
	ctx := context.Background()
	tk, err := f.Tickets.Create(ctx, tickets.Request{CustomerEmail: "gil@example.com", IdempotencyKey: "k10", MessageID: "<gil-1@example.com>"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Tickets.Takeover(ctx, tk.TicketID, "staff"); err != nil {
		t.Fatal(err)
	}
	ref := f.email(t, email{uid: 10, messageID: "<gil-1@example.com>", from: "gil@example.com", subject: "Fire",
		text: "It burns.", scenario: "safety", state: ledger.StateNeedsHuman, reason: triage.ReasonEscalated,
		outcome: &processor.Outcome{Scenario: "safety", Status: triage.StatusReplied, Escalated: true, TicketID: tk.TicketID}}).Ref()

	_, body := do(t, ts.URL, req{path: "/queue", header: bearer})
	if n := strings.Count(body, "/conversation/"+ref+`"`); n != 1 {
		t.Errorf("the escalation is linked %d times in the queue, want once", n)
	}
	if _, body := do(t, ts.URL, req{path: "/queue?reason=escalated", header: bearer}); !strings.Contains(body, ref) {
		t.Error("the escalation in Needs-Human is not listed as an escalation")
	}
	if _, body := do(t, ts.URL, req{path: "/queue?reason=needs_human", header: bearer}); strings.Contains(body, ref) {
		t.Error("the escalation is listed as plain Needs-Human mail too")
	}
	if err := f.Tickets.AddMessage(ctx, tk.TicketID, tickets.Message{MessageID: "<staff-2@example.com>", Direction: tickets.Outbound, From: "staff@example.com", At: f.Clock.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if _, body := do(t, ts.URL, req{path: "/queue", header: bearer}); strings.Contains(body, ref) {
		t.Error("an escalation a person answered is still in the queue")
	}
}

// TestSendRefusedLeavesDraftWaiting: a recipient the SMTP server refuses
// (before DATA: certainly not sent) leaves the draft waiting, tells the
// person why, and keeps the server's words (the address) out of the logs.
func TestSendRefusedLeavesDraftWaiting(t *testing.T) {
	f := newFixture(t)
	sink := mailtest.StartSMTPSink(t, mailtest.SMTPOptions{Reject: map[string]error{
		"anna@example.com": &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no mailbox anna@example.com"}}})
	sender, err := mail.NewSMTP(mail.SMTPConfig{Addr: sink.Addr, TLS: mail.TLSNone})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	s, err := New(Config{Ledger: f.Ledger, Tickets: f.Tickets, Sender: sender, Token: testToken, Now: f.Clock.Now,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	resp, body := do(t, ts.URL, req{method: "POST", path: "/conversation/" + f.Draft + "/approve", form: url.Values{}, header: bearer})
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "no mailbox") {
		t.Errorf("approve: status %d, want 502 naming the refusal", resp.StatusCode)
	}
	if r := draftRow(t, f); r.State != replies.DraftStored || r.Outcome != "" {
		t.Errorf("draft %s/%q after a refused send, want it waiting", r.State, r.Outcome)
	}
	if len(sink.Messages()) != 0 {
		t.Errorf("the sink accepted %d messages", len(sink.Messages()))
	}
	if !strings.Contains(logs.String(), "stage=\"smtp rcpt\"") || strings.Contains(logs.String(), "anna@") {
		t.Errorf("logs:\n%s", logs.String())
	}
}

// A person's reply is refused where triage answers the email (its reply
// stands, or its draft waits), when empty, and over the reply limits; a
// refused reply sends nothing.
func TestComposeRefusals(t *testing.T) {
	f := newFixture(t)
	out, err := replies.NewOutbox(filepath.Join(f.Dir, "outbox"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Ledger: f.Ledger, Tickets: f.Tickets, Sender: out, From: "Support <support@example.com>",
		Limits: replies.Limits{PerAddress: 1, Window: time.Hour}, Token: testToken, Now: f.Clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, s)
	post := func(ref, body string) (int, string) {
		resp, page := do(t, ts.URL, req{method: "POST", path: "/conversation/" + ref + "/compose", form: url.Values{"body": {body}}, header: bearer})
		return resp.StatusCode, page
	}
	for _, tt := range []struct {
		name, ref, body string
		want            int
	}{
		{"triage replied", f.Replied, "Hello", http.StatusConflict},
		{"triage's draft waits", f.Draft, "Hello", http.StatusConflict},
		{"empty", f.Owned, "  \n", http.StatusBadRequest},
	} {
		if code, _ := post(tt.ref, tt.body); code != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, code, tt.want)
		}
	}
	if code, page := post(f.Owned, "Hello Bob"); code != http.StatusSeeOther {
		t.Fatalf("first reply: %d\n%s", code, page)
	}
	// The second within the hour passes the per-address limit of one.
	if code, page := post(f.Owned, "Hello again"); code != http.StatusConflict || !strings.Contains(page, "Over a reply limit") {
		t.Errorf("second reply: %d, want 409 over a limit", code)
	}
	if files, _ := filepath.Glob(filepath.Join(f.Dir, "outbox", "*.eml")); len(files) != 1 {
		t.Errorf("outbox holds %d replies, want the first alone", len(files))
	}
}

// Retry and reject wake triage watch through the store (ledger.Wake): a
// watcher waiting on ledger.Wakes hears each at once.
func TestActionsWakeWatch(t *testing.T) {
	f := newFixture(t)
	_, ts := f.server(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	woken := make(chan struct{}, 10)
	go f.Ledger.Wakes(ctx, 10*time.Millisecond, func() { woken <- struct{}{} })
	time.Sleep(100 * time.Millisecond) // Wakes has read the counter
	for _, a := range []struct {
		ref, action string
		form        url.Values
	}{
		{f.Hostile, "retry", url.Values{}},
		{f.Draft, "reject", url.Values{"reason": {"wrong_tone"}}},
	} {
		if resp, body := do(t, ts.URL, req{method: "POST", path: "/conversation/" + a.ref + "/" + a.action, form: a.form, header: bearer}); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s: %d\n%s", a.action, resp.StatusCode, body)
		}
		select {
		case <-woken:
		case <-time.After(5 * time.Second):
			t.Errorf("%s did not wake triage watch", a.action)
		}
	}
}
