package tickets

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage/internal/store"
	"triage/internal/testkit/pgtest"

	"github.com/google/go-cmp/cmp/cmpopts"
)

// openTicket opens a ticket of customer ("" : req's) with the key, whose
// first message is mid, and returns its ID.
func openTicket(t *testing.T, s Store, customer, key, mid string) string {
	t.Helper()
	r := req(key)
	r.MessageID = mid
	if customer != "" {
		r.CustomerEmail = customer
	}
	tk, err := s.Create(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return tk.TicketID
}

// conversationContract runs the Conversations contract against s.
func conversationContract(t *testing.T, s Store) {
	ctx := context.Background()
	a := openTicket(t, s, "", "ka", "<a1@customer>")
	b := openTicket(t, s, "", "kb", "<b1@customer>")

	// Lookup by any Message-ID of the conversation, ours included.
	if err := s.AddMessage(ctx, a, Message{MessageID: "<r1@us>", Direction: Outbound, Subject: "Re: x [" + a + "]"}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddMessage(ctx, a, Message{MessageID: "<r1@us>", Direction: Outbound}); err != nil {
		t.Fatalf("AddMessage twice: %v", err)
	}
	for _, ids := range [][]string{{"<r1@us>"}, {"<zz@x>", "<a1@customer>"}, {"<a1@customer>", "<b1@customer>"}} {
		st, err := s.Find(ctx, "jan@example.org", ids)
		if err != nil {
			t.Fatalf("Find(%v): %v", ids, err)
		}
		if st.TicketID != a { // the first ID named that is known wins
			t.Errorf("Find(%v) = %s, want %s", ids, st.TicketID, a)
		}
	}
	for _, ids := range [][]string{nil, {""}, {"<nobody@x>"}} {
		if _, err := s.Find(ctx, "jan@example.org", ids); !errors.Is(err, ErrNotFound) {
			t.Errorf("Find(%q): err = %v, want ErrNotFound", ids, err)
		}
	}

	// Notes are idempotent on the Message-ID and record the message.
	note := Note{MessageID: "<a2@customer>", From: "jan@example.org", Subject: "Re: x", Text: "still broken"}
	for i, want := range []bool{true, false} {
		added, err := s.AddNote(ctx, a, note)
		if err != nil {
			t.Fatal(err)
		}
		if added != want {
			t.Errorf("AddNote #%d: added = %v, want %v", i+1, added, want)
		}
	}
	if _, err := s.AddNote(ctx, "TKT-009999", note); !errors.Is(err, ErrNotFound) {
		t.Errorf("AddNote on a missing ticket: %v", err)
	}
	st, err := s.Get(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	ignore := cmpopts.IgnoreFields(Message{}, "At")
	wantMsgs := []Message{
		{MessageID: "<a1@customer>", Direction: Inbound, From: "jan@example.org", Subject: "Reklamacja"},
		{MessageID: "<r1@us>", Direction: Outbound, Subject: "Re: x [" + a + "]"},
		{MessageID: "<a2@customer>", Direction: Inbound, From: "jan@example.org", Subject: "Re: x"},
	}
	if diff := cmp.Diff(wantMsgs, st.Messages, ignore); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Note{note}, st.Notes, cmpopts.IgnoreFields(Note{}, "At")); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	if st.Inbound() != 2 || !st.Customer("JAN@example.org") || st.Customer("eve@example.org") || st.AgentDisabled || st.Status != StatusOpen {
		t.Errorf("state = %+v", st)
	}

	// Takeover and release, by ID and by Message-ID.
	if err := s.Takeover(ctx, a, "anna"); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.Get(ctx, a); !st.AgentDisabled || st.Owner != "anna" {
		t.Errorf("after takeover: %+v", st)
	}
	if err := s.Release(ctx, a); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.Get(ctx, a); st.AgentDisabled || st.Owner != "" {
		t.Errorf("after release: %+v", st)
	}
	id, err := s.TakeoverByMessageID(ctx, "<b1@customer>", "JAN@example.org", "piotr")
	if err != nil || id != b {
		t.Fatalf("TakeoverByMessageID = %q, %v; want %s", id, err, b)
	}
	if st, _ := s.Get(ctx, b); !st.AgentDisabled || st.Owner != "piotr" {
		t.Errorf("after takeover by message: %+v", st)
	}
	if st, _ := s.Get(ctx, a); st.AgentDisabled {
		t.Errorf("the other ticket holding the Message-ID was taken over: %+v", st)
	}
	if _, err := s.TakeoverByMessageID(ctx, "<nobody@x>", "jan@example.org", "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("TakeoverByMessageID unknown: %v", err)
	}
	for _, id := range []string{"TKT-000999", "bogus"} {
		if _, err := s.Get(ctx, id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get(%s): %v", id, err)
		}
		if err := s.Takeover(ctx, id, "x"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Takeover(%s): %v", id, err)
		}
	}
	// Something that is not an ID is named once, shortened, after "no
	// such ticket".
	_, err = s.Get(ctx, "zz"+strings.Repeat("x", 5000))
	if msg := fmt.Sprint(err); !strings.HasPrefix(msg, `tickets: no such ticket: "zzxxx`) || strings.Count(msg, "tickets:") != 1 || len(msg) > 200 {
		t.Errorf("Get(5 KB of junk): %q, want one short error naming the ID", msg)
	}
}

func TestSQLiteConversations(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		s, err := OpenSQLite(target)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		conversationContract(t, s)
		list, err := s.List(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		got := []string{}
		for _, l := range list {
			got = append(got, l.TicketID+" "+map[bool]string{true: "human", false: "agent"}[l.AgentDisabled])
		}
		if diff := cmp.Diff([]string{"TKT-000002 human", "TKT-000001 agent"}, got); diff != "" {
			t.Errorf("list (-want +got):\n%s", diff)
		}
		if list[1].Messages != 3 || list[1].Notes != 1 {
			t.Errorf("list counts = %+v", list[1])
		}
	})
}

func TestSQLitePlantedMessageID(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		s, err := OpenSQLite(target)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		plantedContract(t, s)
	})
}

func TestHTTPPlantedMessageID(t *testing.T) {
	h, _ := newConvHTTP(t)
	plantedContract(t, h)
}

// plantedContract: a takeover by Message-ID takes the customer's ticket
// only; a stranger's earlier ticket holding the same Message-ID (planted)
// is never taken instead, and no customer matches none.
func plantedContract(t *testing.T, s Store) {
	ctx := context.Background()
	eve := openTicket(t, s, "eve@example.org", "ke", "<p1@customer>")
	jan := openTicket(t, s, "", "kj", "<p1@customer>")
	for _, customer := range []string{"", "nobody@example.org"} {
		if id, err := s.TakeoverByMessageID(ctx, "<p1@customer>", customer, "x"); !errors.Is(err, ErrNotFound) {
			t.Errorf("TakeoverByMessageID for %q = %q, %v; want ErrNotFound", customer, id, err)
		}
	}
	if id, err := s.TakeoverByMessageID(ctx, "<p1@customer>", "Jan@example.org", "piotr"); err != nil || id != jan {
		t.Errorf("TakeoverByMessageID of the planted ID = %q, %v; want the customer's %s", id, err, jan)
	}
	if st, _ := s.Get(ctx, eve); st.AgentDisabled {
		t.Errorf("the stranger's ticket holding the customer's Message-ID was taken over: %+v", st)
	}
}

// TestHTTPConversations runs the contract over HTTP against a service that
// implements the documented endpoints on top of a SQLite store.
func TestHTTPConversations(t *testing.T) {
	h, db := newConvHTTP(t)
	conversationContract(t, h)

	// agent_disabled set by the service itself is what Get reports.
	if _, err := db.db.ExecContext(context.Background(), `UPDATE tickets SET agent_disabled = 1, owner = 'crm' WHERE seq = 1`); err != nil {
		t.Fatal(err)
	}
	st, err := h.Get(context.Background(), "TKT-000001")
	if err != nil || !st.AgentDisabled || st.Owner != "crm" {
		t.Errorf("Get = %+v, %v", st, err)
	}
}

func TestHTTPConversationErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/tickets/TKT-000001":
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			w.Write([]byte(`{"status":"open"}`))
		}
	}))
	defer srv.Close()
	h, _ := NewHTTP(HTTPConfig{BaseURL: srv.URL})
	_, err := h.Get(context.Background(), "TKT-000001")
	var he *HTTPError
	if !errors.As(err, &he) || !he.Temporary() {
		t.Errorf("503: err = %v, want a temporary HTTPError", err)
	}
	if _, err := h.Find(context.Background(), "", []string{"<x@y>"}); err == nil || !strings.Contains(err.Error(), "no ticket_id") {
		t.Errorf("answer without ticket_id: err = %v", err)
	}
}

// newConvHTTP is an HTTP client of a convService over a fresh SQLite
// store, both closed when the test ends.
func newConvHTTP(t *testing.T) (*HTTP, *SQLite) {
	t.Helper()
	db, err := OpenSQLite(filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	srv := httptest.NewServer(&convService{db: db})
	t.Cleanup(srv.Close)
	h, err := NewHTTP(HTTPConfig{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return h, db
}

// convService is the documented HTTP contract over a SQLite store.
type convService struct{ db *SQLite }

func (c *convService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	reply := func(st *State, err error) {
		switch {
		case errors.Is(err, ErrNotFound):
			http.Error(w, err.Error(), http.StatusNotFound)
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
		default:
			json.NewEncoder(w).Encode(st)
		}
	}
	decode := func(v any) bool {
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return false
		}
		return true
	}
	path := strings.TrimPrefix(r.URL.Path, "/tickets")
	id, action, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	switch {
	case r.Method == http.MethodPost && path == "":
		var req Request
		if decode(&req) {
			tk, err := c.db.Create(ctx, req)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			json.NewEncoder(w).Encode(tk)
		}
	case r.Method == http.MethodGet && path == "":
		reply(c.db.Find(ctx, r.URL.Query().Get("customer_email"), r.URL.Query()["message_id"]))
	case r.Method == http.MethodGet && action == "":
		reply(c.db.Get(ctx, id))
	case r.Method == http.MethodPost && action == "notes":
		var n Note
		if !decode(&n) {
			return
		}
		if r.Header.Get("Idempotency-Key") != n.MessageID {
			http.Error(w, "idempotency key mismatch", http.StatusBadRequest)
			return
		}
		added, err := c.db.AddNote(ctx, id, n)
		if err != nil {
			reply(nil, err)
			return
		}
		if added {
			w.WriteHeader(http.StatusCreated)
		}
		json.NewEncoder(w).Encode(map[string]bool{"added": added})
	case r.Method == http.MethodPost && action == "messages":
		var m Message
		if decode(&m) {
			if err := c.db.AddMessage(ctx, id, m); err != nil {
				reply(nil, err)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		}
	case r.Method == http.MethodPost && (action == "takeover" || action == "release"):
		var b ownerBody
		if !decode(&b) {
			return
		}
		var err error
		if action == "takeover" {
			err = c.db.Takeover(ctx, id, b.Owner)
		} else {
			err = c.db.Release(ctx, id)
		}
		if err != nil {
			reply(nil, err)
			return
		}
		reply(c.db.Get(ctx, id))
	default:
		http.Error(w, "no route", http.StatusBadRequest)
	}
}

// TestSQLiteMigration opens a store written before conversations existed:
// its tickets survive and gain messages, notes and ownership.
func TestSQLiteMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	old, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec(schema); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec(`INSERT INTO tickets (idempotency_key, serial_number, customer_email, priority, summary, created_at)
		VALUES ('k-old', 'SN-9', 'ola@example.org', 'normal', 'Stara sprawa', '2026-01-02T03:04:05Z')`); err != nil {
		t.Fatal(err)
	}
	old.Close()

	for range 2 { // the second open finds the schema current
		s, err := OpenSQLite(path)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, err := s.AddNote(ctx, "TKT-000001", Note{MessageID: "<f@x>", From: "ola@example.org", Text: "hello"}); err != nil {
			t.Fatal(err)
		}
		st, err := s.Get(ctx, "TKT-000001")
		if err != nil {
			t.Fatal(err)
		}
		if st.Status != StatusOpen || st.CustomerEmail != "ola@example.org" || len(st.Notes) != 1 ||
			!st.CreatedAt.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
			t.Errorf("migrated ticket = %+v", st)
		}
		tk, err := s.Create(ctx, Request{IdempotencyKey: "k-old"})
		if err != nil || tk.TicketID != "TKT-000001" || tk.Status != StatusExisting {
			t.Errorf("old key after migration: %+v %v", tk, err)
		}
		s.Close()
	}
	s, _ := OpenSQLite(path)
	defer s.Close()
	ctx := context.Background()
	var v int
	s.db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v)
	if v != len(sqliteSteps) {
		t.Errorf("user_version = %d, want %d", v, len(sqliteSteps))
	}
	if v, err := s.db.Version(ctx, Component); err != nil || v != len(migrations) {
		t.Errorf("schema version = %d, %v; want %d", v, err, len(migrations))
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE schema_versions SET version = 99 WHERE component = ?`, Component); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := OpenSQLite(path); !errors.Is(err, store.ErrNewerSchema) {
		t.Errorf("newer schema: err = %v", err)
	}

	// A file from before the store versioned schemas, written by a newer
	// program (user_version past what this one knows), is refused too.
	newer := filepath.Join(t.TempDir(), "newer.db")
	db, err := sql.Open("sqlite", "file:"+newer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(schema + `; PRAGMA user_version = 5`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := OpenSQLite(newer); !errors.Is(err, store.ErrNewerSchema) {
		t.Errorf("newer pre-versioning file: err = %v", err)
	}
}

func TestTags(t *testing.T) {
	for _, tt := range []struct{ subject, id, tagged string }{
		{"Re: Reklamacja [TKT-000123]", "TKT-000123", "Re: Reklamacja [TKT-000123]"},
		{"Re: Reklamacja", "", "Re: Reklamacja [TKT-000042]"},
		{"[TKT-12] short", "", "[TKT-12] short [TKT-000042]"},
		{"", "", "[TKT-000042]"},
		{"Re: x [TKT-000007]", "TKT-000007", "Re: x [TKT-000042]"}, // another ticket's tag is replaced
	} {
		if got := TagInSubject(tt.subject); got != tt.id {
			t.Errorf("TagInSubject(%q) = %q, want %q", tt.subject, got, tt.id)
		}
		want := tt.tagged
		if tt.id != "" && !strings.Contains(tt.tagged, "000042") {
			if got := WithTag(tt.subject, tt.id); got != want {
				t.Errorf("WithTag(%q, %s) = %q", tt.subject, tt.id, got)
			}
			continue
		}
		if got := WithTag(tt.subject, "TKT-000042"); got != want {
			t.Errorf("WithTag(%q) = %q, want %q", tt.subject, got, want)
		}
	}
	if n, err := ParseID("tkt-000123"); n != 123 || err != nil {
		t.Errorf("ParseID = %d, %v", n, err)
	}
	for _, bad := range []string{"", "TKT-", "TKT-0", "123", "TKT-x1"} {
		if _, err := ParseID(bad); err == nil {
			t.Errorf("ParseID(%q) accepted", bad)
		}
	}
}

func TestSQLiteRestore(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		s, err := OpenSQLite(target)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ctx := context.Background()
		at := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
		want := State{TicketID: "TKT-000123", Status: StatusOpen, CustomerEmail: "ola@example.org", SerialNumber: "SN-1",
			AgentDisabled: true, Owner: "anna", CreatedAt: at,
			Messages: []Message{{MessageID: "<o1@x>", Direction: Inbound, From: "ola@example.org", Subject: "Pomoc", At: at},
				{MessageID: "<r1@us>", Direction: Outbound, Subject: "Re: Pomoc [TKT-000123]", At: at.Add(time.Hour)}},
			Notes: []Note{{MessageID: "<o1@x>", From: "ola@example.org", Text: "nie działa", At: at}}}
		if err := s.Restore(ctx, want); err != nil {
			t.Fatal(err)
		}
		got, err := s.Find(ctx, "ola@example.org", []string{"<r1@us>"})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&want, got); diff != "" {
			t.Errorf("restored (-want +got):\n%s", diff)
		}
		if err := s.Restore(ctx, want); err == nil {
			t.Error("restoring the same ID twice accepted")
		}
		// New tickets continue after the restored ID.
		tk, err := s.Create(ctx, req("k-new"))
		if err != nil || tk.TicketID != "TKT-000124" {
			t.Errorf("Create after Restore = %+v, %v", tk, err)
		}
	})
}

func TestWithTagOnlyRemoves(t *testing.T) {
	if got := WithTag("Re: Pralka [TKT-000125] przecieka", ""); got != "Re: Pralka przecieka" {
		t.Errorf("WithTag without a ticket = %q", got)
	}
}

// BenchmarkSQLiteFind looks a follow-up's References up in a store of 10,000
// tickets with two messages each (the lookup every inbound email makes).
func BenchmarkSQLiteFind(b *testing.B) {
	s, err := OpenSQLite(filepath.Join(b.TempDir(), "t.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	const n = 10000
	for i := range n {
		r := req(fmt.Sprintf("k%d", i))
		r.MessageID = fmt.Sprintf("<in-%d@customer.example>", i)
		tk, err := s.Create(ctx, r)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.AddMessage(ctx, tk.TicketID, Message{MessageID: fmt.Sprintf("<out-%d@example.com>", i), Direction: Outbound}); err != nil {
			b.Fatal(err)
		}
	}
	refs := []string{"<unknown-1@x>", "<unknown-2@x>", "<in-4242@customer.example>", "<out-4242@example.com>"}
	b.ResetTimer()
	for b.Loop() {
		st, err := s.Find(ctx, "jan@example.org", refs)
		if err != nil || st.TicketID != "TKT-004243" {
			b.Fatalf("Find = %+v, %v", st, err)
		}
	}
}
