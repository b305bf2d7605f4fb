package console

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/ledger"
	"triage/internal/testkit/pgtest"
)

// flood records n cheap emails over a reply limit, newer than the
// fixture's, as watch records them.
func (f *fixture) flood(t *testing.T, n int) {
	t.Helper()
	ctx := context.Background()
	f.Clock.Set(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC))
	for i := range n {
		from := fmt.Sprintf("bulk%d@spam.example", i)
		id := fmt.Sprintf("<bulk-%d@spam.example>", i)
		loc := ledger.Loc{Account: "support@example.com", Mailbox: "INBOX", UIDValidity: 1, UID: uint32(10000 + i)}
		if _, err := f.Ledger.Begin(ctx, ledger.Entry{Loc: loc, Key: triage.Key("msgid:" + id + "|" + from), MessageID: id, Sender: from, Subject: "cheap"}); err != nil {
			t.Fatal(err)
		}
		if err := f.Ledger.Finish(ctx, loc, ledger.StateOverLimit, triage.ReasonGlobalLimit, "general"); err != nil {
			t.Fatal(err)
		}
	}
}

// 1,010 cheap emails over a limit, newer than a draft and an escalation,
// do not push them out of the queue: every kind is read apart, the counts
// say how many wait for each reason, and the pages list every email,
// oldest first, PageSize a page.
func TestQueueFloodHidesNothing(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		f := newFixtureOn(t, target)
		f.flood(t, 1010)
		_, ts := f.server(t, nil)
		_, body := do(t, ts.URL, req{path: "/queue", header: bearer})
		refs := refsIn(body)
		if len(refs) != PageSize || refs[0] != f.Draft {
			t.Fatalf("page 1 lists %d emails starting %v, want %d starting with the draft", len(refs), refs[:min(len(refs), 3)], PageSize)
		}
		for _, want := range []string{`id="queue-count">1014<`, `draft waiting <b>1</b>`, `escalated <b>1</b>`, `over a reply limit <b>1010</b>`, `1–50 of 1014`, `page 1 of 21`} {
			if !strings.Contains(body, want) {
				t.Errorf("the queue page lacks %q", want)
			}
		}
		seen := map[string]bool{}
		for p := 1; p <= 21; p++ {
			_, body := do(t, ts.URL, req{path: fmt.Sprintf("/queue?page=%d", p), header: bearer})
			for _, r := range refsIn(body) {
				seen[r] = true
			}
		}
		for _, ref := range []string{f.Draft, f.Hostile, f.Owned, f.Escalated} {
			if !seen[ref] {
				t.Errorf("%s is on no page", ref)
			}
		}
		if len(seen) != 1014 {
			t.Errorf("the pages list %d emails, want 1014", len(seen))
		}
		_, body = do(t, ts.URL, req{path: "/queue?reason=escalated", header: bearer})
		if diff := cmp.Diff([]string{f.Escalated}, refsIn(body)); diff != "" {
			t.Errorf("escalations (-want +got):\n%s", diff)
		}
	})
}

// The search finds an email by its subject, its customer's address or
// name, a serial it gave, or its ticket; it is sent in the body and never
// put in the URL pushed to the browser.
func TestQueueSearch(t *testing.T) {
	f := newFixture(t)
	_, ts := f.server(t, nil)
	for q, want := range map[string][]string{
		"kettle":          {f.Draft},
		"ANNA NOWAK":      {f.Draft},
		"bob@example.com": {f.Owned},
		"sn-12345":        {f.Draft},
		f.OwnedTicket:     {f.Owned},
		"smoke":           {f.Escalated},
		"nothing-like-it": nil,
	} {
		h := map[string]string{"Authorization": "Bearer " + testToken, "HX-Request": "true"}
		resp, body := do(t, ts.URL, req{method: "POST", path: "/queue", form: url.Values{"q": {q}, "sort": {""}}, header: h})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("search %q: status %d", q, resp.StatusCode)
		}
		if diff := cmp.Diff(want, refsIn(body)); diff != "" {
			t.Errorf("search %q (-want +got):\n%s", q, diff)
		}
		if push := resp.Header.Get("HX-Push-Url"); strings.Contains(strings.ToLower(push), strings.ToLower(url.QueryEscape(q))) {
			t.Errorf("the pushed URL %q holds the search", push)
		}
	}
	// A search in the URL is ignored: searches go in the body.
	if _, body := do(t, ts.URL, req{path: "/queue?q=kettle", header: bearer}); len(refsIn(body)) != 4 {
		t.Errorf("a search in the URL filtered the queue to %d", len(refsIn(body)))
	}
}

// sort=priority lists the highest ticket priority first; the counts per
// reason follow the other filters.
func TestQueueSortPriorityAndCounts(t *testing.T) {
	f := newFixture(t)
	_, ts := f.server(t, nil)
	_, body := do(t, ts.URL, req{path: "/queue?sort=priority", header: bearer})
	// The draft's and the follow-up's tickets are normal; the others have
	// none, and keep waiting longest first.
	if diff := cmp.Diff([]string{f.Draft, f.Owned, f.Hostile, f.Escalated}, refsIn(body)); diff != "" {
		t.Errorf("queue by priority (-want +got):\n%s", diff)
	}
	_, body = do(t, ts.URL, req{path: "/queue?scenario=valid-warranty", header: bearer})
	for _, want := range []string{`draft waiting <b>1</b>`, `needs a person <b>1</b>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the counts under scenario valid-warranty lack %q", want)
		}
	}
	if strings.Contains(body, `failed <b>`) {
		t.Error("the counts include a reason the scenario filter hides")
	}
}

// More emails of one kind than the queue reads say so above the list: the
// page never hides that something waits.
func TestQueueSaysWhatItCannotList(t *testing.T) {
	f := newFixture(t)
	f.flood(t, 5)
	s, ts := f.server(t, nil)
	s.maxQueue = 3
	_, body := do(t, ts.URL, req{path: "/queue", header: bearer})
	if !strings.Contains(body, `More than 3 emails wait as <strong>over_limit</strong>`) {
		t.Error("the queue does not say that more emails over a limit wait than it lists")
	}
	if !slices.Contains(refsIn(body), f.Draft) {
		t.Error("the draft is not listed")
	}
}
