package watch

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"mime"
	"net/mail"
	"strings"

	"triage/internal/message"
)

// identity is what the ledger needs to know about an inbound message before
// processing it.
type identity struct {
	Key       string // secondary ledger key and pipeline idempotency key
	MessageID string
	// Sender is the bare, lower-cased From address as the pipeline parses it
	// ("" when it has none): limits count against it.
	Sender string
	// ReplyTo is where the pipeline will answer (Reply-To, else From),
	// lower-cased.
	ReplyTo string
	Subject string
}

// identify derives the stable key of a message from its header: Message-ID +
// sender when there is a Message-ID, otherwise a hash of the header bytes
// (which do not change when the server renumbers the mailbox).
func identify(header []byte) identity {
	var id identity
	keySender := ""
	msg, err := mail.ReadMessage(bytes.NewReader(append(bytes.TrimRight(header, "\r\n"), "\r\n\r\n"...)))
	if err == nil {
		id.MessageID = strings.TrimSpace(msg.Header.Get("Message-Id"))
		// The key keeps the sender as net/mail (without charsets) reads
		// it, so that keys recorded by earlier versions stay valid.
		if list, err := mail.ParseAddressList(msg.Header.Get("From")); err == nil && len(list) > 0 {
			keySender = strings.ToLower(list[0].Address)
		}
		dec := new(mime.WordDecoder)
		if s, err := dec.DecodeHeader(msg.Header.Get("Subject")); err == nil {
			id.Subject = s
		} else {
			id.Subject = msg.Header.Get("Subject")
		}
	}
	// The addresses limits count against are the ones the pipeline will
	// see (charset-aware parsing, no guessing).
	// The header is bounded by its fetch (maxHeaderFetch), so it is read
	// whole even when the pipeline would refuse it as too large.
	if m, err := message.ParseLimits(header, message.Limits{HeaderBytes: maxHeaderFetch, FieldBytes: maxHeaderFetch}); err == nil {
		id.Sender = strings.ToLower(m.From.Address)
		id.ReplyTo = strings.ToLower(m.ReplyTo)
	}
	if id.MessageID != "" {
		id.Key = "msgid:" + id.MessageID + "|" + keySender
	} else {
		sum := sha256.Sum256(header)
		id.Key = "sha256:" + hex.EncodeToString(sum[:])
	}
	return id
}
