package watch

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage/internal/mailtest"
)

// A second message with the Key of a handled one (the same Message-ID and
// sender) but other content is never reported answered: its reply would be
// the first message's, so it is left for a person. A true copy (the same
// bytes in another place) is still already handled.
func TestSameKeyOtherContentIsLeftForAPerson(t *testing.T) {
	e := newEnv(t, memTarget(mailtest.StartIMAP(t, mailtest.IMAPOptions{})))
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
