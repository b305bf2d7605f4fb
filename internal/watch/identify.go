package watch

import (
	"strings"
	"time"

	"triage"
	"triage/internal/message"
)

// identity is what the ledger needs to know about an inbound message before
// processing it.
type identity struct {
	Key       triage.Key // secondary ledger key and pipeline idempotency key
	MessageID string
	// From is the bare, lower-cased From address as the pipeline parses it
	// ("" when it has none): limits count against it.
	From string
	// ReplyTo is where the pipeline will answer (Reply-To, else From),
	// lower-cased.
	ReplyTo string
	Subject string
	// Date is the Date header (zero when missing or unreadable).
	Date time.Time
}

// identify reads a message's header with the pipeline's parser (charsets,
// RFC 2047 words) and derives its Key from it; the header bytes, which do not
// change when the server renumbers the mailbox, stand for a message without a
// Message-ID.
func identify(header []byte) identity {
	// The header is bounded by its fetch (maxHeaderFetch), so it is read
	// whole even when the pipeline would refuse it as too large.
	m, err := message.ParseLimits(header, message.Limits{HeaderBytes: maxHeaderFetch, FieldBytes: maxHeaderFetch})
	if err != nil {
		return identity{Key: triage.KeyOf(nil, header)}
	}
	return identity{
		Key:       triage.KeyOf(m, header),
		MessageID: m.MessageID,
		From:      strings.ToLower(m.From.Address),
		ReplyTo:   strings.ToLower(m.ReplyTo),
		Subject:   m.Subject,
		Date:      m.Date,
	}
}
