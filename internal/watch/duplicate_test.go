package watch

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/ledger"
	"triage/internal/testkit/mailtest"
)

// A second message with the Key of a handled one (the same Message-ID and
// sender) but other content is never reported answered: its reply would be
// the first message's, so it is left for a person. A true copy (the same
// bytes in another place) is still already handled.
func TestSameKeyOtherContentIsLeftForAPerson(t *testing.T) {
	e := newEnv(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{}).Target())
	id := e.deliver(1, "jan@customer.example", "Gwarancja")
	e.runOnce(nil)
	other := fmt.Sprintf("From: Klient <jan@customer.example>\r\nTo: support@example.com\r\nSubject: Inna sprawa\r\nMessage-ID: %s\r\nDate: %s\r\n\r\nZupełnie inna treść, numer SN-0009.\r\n",
		id, e.now.Add(time.Hour).Format(time.RFC1123Z))
	e.tgt.Append(t, "INBOX", []byte(other))
	e.runOnce(nil)

	es, err := e.ledger.Recent(context.Background(), 10, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, en := range es {
		got = append(got, fmt.Sprintf("%s %s %s", en.Subject, en.State, en.Reason))
	}
	sort.Strings(got)
	want := []string{"Gwarancja replied ", "Inna sprawa failed duplicate_message_id"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ledger (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{id: 1}, e.repliesTo()); diff != "" {
		t.Errorf("replies by In-Reply-To (-want +got):\n%s", diff)
	}
}

// A copy of a handled message that reached the mailbox again with other
// transport headers (another relay's Received line) is the same message:
// what its author wrote is what counts. It is already handled, not left for
// a person as another message reusing the Key.
func TestRedeliveredCopyIsAlreadyHandled(t *testing.T) {
	e := newEnv(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{}).Target())
	id := e.deliver(1, "jan@customer.example", "Gwarancja")
	e.runOnce(nil)
	inbox := e.mailbox("INBOX")
	if len(inbox) != 1 {
		t.Fatalf("INBOX holds %d messages, want 1", len(inbox))
	}
	copied := append([]byte("Received: from relay2.customer.example by mx.example.com; Mon, 2 Nov 2026 10:00:00 +0100\r\n"), inbox[0].Raw...)
	e.tgt.Append(t, "INBOX", copied)
	w := e.runOnce(nil)

	if diff := cmp.Diff(map[ledger.State]int{ledger.StateSkipped: 1}, w.Stats().ByState); diff != "" {
		t.Errorf("second pass (-want +got):\n%s", diff)
	}
	es, err := e.ledger.Recent(context.Background(), 10, ledger.StateSkipped)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Reason != triage.ReasonAlreadyHandled {
		t.Errorf("skipped entries %+v, want one already_handled", es)
	}
	if diff := cmp.Diff(map[string]int{id: 1}, e.repliesTo()); diff != "" {
		t.Errorf("replies by In-Reply-To (-want +got):\n%s", diff)
	}
}
