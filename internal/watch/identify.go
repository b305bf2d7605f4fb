package watch

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"mime"
	"net/mail"
	"strings"
)

// identity is what the ledger needs to know about an inbound message before
// processing it.
type identity struct {
	Key       string // secondary ledger key and pipeline idempotency key
	MessageID string
	Sender    string // bare, lower-cased From address
	Subject   string
}

// identify derives the stable key of a message from its header: Message-ID +
// sender when there is a Message-ID, otherwise a hash of the header bytes
// (which do not change when the server renumbers the mailbox).
func identify(header []byte) identity {
	var id identity
	msg, err := mail.ReadMessage(bytes.NewReader(append(bytes.TrimRight(header, "\r\n"), "\r\n\r\n"...)))
	if err == nil {
		id.MessageID = strings.TrimSpace(msg.Header.Get("Message-Id"))
		if list, err := mail.ParseAddressList(msg.Header.Get("From")); err == nil && len(list) > 0 {
			id.Sender = strings.ToLower(list[0].Address)
		}
		dec := new(mime.WordDecoder)
		if s, err := dec.DecodeHeader(msg.Header.Get("Subject")); err == nil {
			id.Subject = s
		} else {
			id.Subject = msg.Header.Get("Subject")
		}
	}
	if id.MessageID != "" {
		id.Key = "msgid:" + id.MessageID + "|" + id.Sender
	} else {
		sum := sha256.Sum256(header)
		id.Key = "sha256:" + hex.EncodeToString(sum[:])
	}
	return id
}
