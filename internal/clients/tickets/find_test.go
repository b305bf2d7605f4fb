package tickets

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage/internal/testkit/pgtest"
)

// findContract attacks Find as a stranger would: Eve's older ticket carries
// Anna's Message-ID (Eve sent a follow-up reusing it; Message-IDs travel in
// every Cc and forward). Anna's lookups must only ever find Anna's tickets,
// and among them the one her message answers.
func findContract(t *testing.T, s Store) {
	ctx := context.Background()
	open := func(customer, key, mid string) string {
		t.Helper()
		return openTicket(t, s, customer, key, mid)
	}
	out := func(ticket, mid string) {
		t.Helper()
		if err := s.AddMessage(ctx, ticket, Message{MessageID: mid, Direction: Outbound}); err != nil {
			t.Fatal(err)
		}
	}
	eve := open("eve@example.net", "k-eve", "<eve-1@example.net>")
	out(eve, "<re-eve-1@us>")
	anna := open("anna@example.pl", "k-anna", "<anna-1@example.pl>")
	out(anna, "<re-anna-1@us>")
	if _, err := s.AddNote(ctx, eve, Note{MessageID: "<anna-1@example.pl>", From: "eve@example.net", Text: "planted"}); err != nil {
		t.Fatal(err)
	}
	annaLater := open("anna@example.pl", "k-anna-2", "<anna-5@example.pl>")
	out(annaLater, "<re-anna-5@us>")

	tests := []struct {
		name     string
		customer string
		ids      []string
		want     string // "" : ErrNotFound
	}{
		{"Anna's follow-up names her first message", "anna@example.pl",
			Answered("<re-anna-1@us>", []string{"<anna-1@example.pl>", "<re-anna-1@us>"}), anna},
		{"only the planted ID, from Anna", "Anna@Example.PL", []string{"<anna-1@example.pl>"}, anna},
		{"Eve's own ticket carries the planted ID", "eve@example.net", []string{"<anna-1@example.pl>"}, eve},
		{"Eve names Anna's reply", "eve@example.net", []string{"<re-anna-1@us>"}, ""},
		{"Anna names Eve's thread", "anna@example.pl", []string{"<re-eve-1@us>", "<eve-1@example.net>"}, ""},
		{"In-Reply-To wins over an older ticket in References", "anna@example.pl",
			Answered("<re-anna-5@us>", []string{"<anna-1@example.pl>", "<re-anna-1@us>", "<anna-5@example.pl>", "<re-anna-5@us>"}), annaLater},
		{"the newest Reference wins without In-Reply-To", "anna@example.pl",
			Answered("", []string{"<anna-1@example.pl>", "<anna-5@example.pl>"}), annaLater},
		{"any customer: the thread's ticket", "", []string{"<re-eve-1@us>"}, eve},
		{"any customer: the first ID named decides", "", []string{"<re-anna-1@us>", "<eve-1@example.net>"}, anna},
		{"unknown IDs", "anna@example.pl", []string{"<nobody@x>"}, ""},
	}
	for _, tt := range tests {
		st, err := s.Find(ctx, tt.customer, tt.ids)
		got := ""
		switch {
		case err == nil:
			got = st.TicketID
		case !errors.Is(err, ErrNotFound):
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got != tt.want {
			t.Errorf("%s: Find(%q, %v) = %q, want %q", tt.name, tt.customer, tt.ids, got, tt.want)
		}
	}
}

func TestSQLiteFindOnlyTheCustomersTickets(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		s, err := OpenSQLite(target)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		findContract(t, s)
	})
}

func TestHTTPFindOnlyTheCustomersTickets(t *testing.T) {
	h, _ := newConvHTTP(t)
	findContract(t, h)
}

// A ticket service that ignores customer_email and answers another
// customer's ticket is not believed: the lookup finds nothing.
func TestHTTPFindChecksTheCustomer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"ticket_id":"TKT-000001","status":"open","customer_email":"eve@example.net","agent_disabled":true,
			"messages":[{"message_id":"<anna-1@example.pl>","direction":"in","from":"eve@example.net"}],"notes":[]}`)
	}))
	defer srv.Close()
	h, err := NewHTTP(HTTPConfig{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := h.Find(context.Background(), "anna@example.pl", []string{"<anna-1@example.pl>"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Find = %+v, %v; want ErrNotFound", st, err)
	}
	if st, err := h.Find(context.Background(), "", []string{"<anna-1@example.pl>"}); err != nil || st.TicketID != "TKT-000001" {
		t.Errorf("Find for any customer = %+v, %v", st, err)
	}
}

func TestAnswered(t *testing.T) {
	tests := []struct {
		inReplyTo string
		refs      []string
		want      []string
	}{
		{"<c>", []string{"<a>", "<b>", "<c>"}, []string{"<c>", "<b>", "<a>"}},
		{"", []string{"<a>", " ", "<b>"}, []string{"<b>", "<a>"}},
		{" <x> ", nil, []string{"<x>"}},
		{"", nil, []string{}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Answered(tt.inReplyTo, tt.refs)); diff != "" {
			t.Errorf("Answered(%q, %q) (-want +got):\n%s", tt.inReplyTo, tt.refs, diff)
		}
	}
}
