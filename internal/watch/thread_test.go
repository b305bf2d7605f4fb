package watch

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage/internal/testkit/mailtest"
)

// A stranger who knows the victim's Message-ID sends a message of their own
// reusing it. A support person then answers the victim's original email from
// their mail client: the thread found for that reply is the victim's, the
// message whose sender the person answered, not the stranger's row that
// carries the same Message-ID and was handled later.
func TestPersonReplyFindsTheThreadOfItsRecipient(t *testing.T) {
	e := newEnv(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{}).Target())
	hooks := &hookLog{}
	mod := func(c *Config) { c.SentFolder = "Sent"; c.OnPersonReply = hooks.hook }

	id := e.deliver(1, "ofiara@customer.example", "Gwarancja")
	e.runOnce(mod)
	e.now = e.now.Add(time.Minute)
	planted := fmt.Sprintf("From: Obcy <obcy@stranger.example>\r\nTo: support@example.com\r\nSubject: Pytanie\r\nMessage-ID: %s\r\nDate: %s\r\n\r\nInna sprawa SN-0002.\r\n",
		id, e.now.Format(time.RFC1123Z))
	e.tgt.Append(t, "INBOX", []byte(planted))
	time.Sleep(5 * time.Millisecond) // the stranger's row is the most recently updated
	e.runOnce(mod)

	e.tgt.Append(t, "Sent", personReply(1, "ofiara@customer.example", id, "Dzień dobry, zajmę się tym osobiście."))
	e.runOnce(mod)
	var senders []string
	for _, r := range hooks.got {
		senders = append(senders, r.Thread.Sender)
	}
	if diff := cmp.Diff([]string{"ofiara@customer.example"}, senders); diff != "" {
		t.Errorf("threads of the person's reply, by sender (-want +got):\n%s", diff)
	}
}
