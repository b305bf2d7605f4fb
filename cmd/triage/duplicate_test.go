package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage/internal/clients/tickets"
)

// A second email with the Key of an answered one (the same Message-ID and
// sender) but other content is never reported answered: its reply would be
// the first one's. It fails as duplicate_message_id, left for a person;
// the same email processed again is still the reply that exists. Both are
// told from the outbox before anything runs: no model call, no ticket.
func TestProcessSameKeyOtherContent(t *testing.T) {
	dir := t.TempDir()
	common := []string{"process", "--json", "--warranty-csv", "../../examples/warranty.csv", "--tickets-db", filepath.Join(dir, "t.db"), "--outbox", filepath.Join(dir, "out")}
	email := func(subject, body string) string {
		return fmt.Sprintf("From: Jan <jan@example.pl>\r\nTo: serwis@example.com\r\nSubject: %s\r\nMessage-ID: <dup-1@example.pl>\r\nDate: Mon, 2 Nov 2026 10:00:00 +0100\r\n"+
			"Content-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n", subject, body)
	}
	first := email("Reklamacja SN-48213-PL", "Dzień dobry, mój ekspres SN-48213-PL nie działa. Proszę o naprawę gwarancyjną.")
	other := email("Inna sprawa", "Dzień dobry, pytanie o inny ekspres, numer ABC-123456, nie działa.")
	var got, calls []string
	for _, in := range []string{first, first, other} {
		_, stdout, stderr := runCLI(t, in, append(common, "-")...)
		outs := decodeOutcomes(t, stdout)
		if len(outs) != 1 {
			t.Fatalf("%d outcomes\nstderr: %s", len(outs), stderr)
		}
		o := outs[0]
		s := string(o.Status) + " " + string(o.Reason)
		if o.Reply != nil && o.Reply.Existing {
			s += " existing"
		}
		got = append(got, s)
		calls = append(calls, fmt.Sprintf("%d model calls, %d function calls", o.ModelCalls, len(o.FunctionCalls)))
	}
	want := []string{"replied ", "replied  existing", "failed duplicate_message_id"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"0 model calls, 0 function calls", "0 model calls, 0 function calls"}, calls[1:]); diff != "" {
		t.Errorf("the second and third runs (-want +got):\n%s", diff)
	}
	db, err := tickets.OpenSQLite(filepath.Join(dir, "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	listed, err := db.List(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 {
		t.Errorf("%d tickets, want the first email's only: %+v", len(listed), listed)
	}
}
