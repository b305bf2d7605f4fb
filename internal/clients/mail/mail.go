// Package mail renders and sends customer replies: complete RFC 5322 messages
// with threading and auto-reply headers, written to an outbox directory or
// submitted over SMTP.
package mail

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	netmail "net/mail"
	"strings"
	"time"

	gomail "github.com/emersion/go-message/mail"

	"triage"
	"triage/internal/clip"
)

// Reply is one reply to an inbound message.
type Reply struct {
	From       string // our address, e.g. "Support <support@example.com>"
	To         string // bare address
	ToName     string // the customer's display name, "" for none
	Subject    string
	Body       string   // plain text, UTF-8
	InReplyTo  string   // inbound Message-ID (with brackets), may be ""
	References []string // inbound References + inbound Message-ID
	MessageID  string   // with brackets; "" means generate (see MessageIDFor)
	Date       time.Time
	Key        triage.Key // inbound idempotency key, for senders that keep a ledger
	// Draft: leave the reply as a draft for a person to send (reply mode
	// draft) instead of sending it; the receipt says Drafted.
	Draft bool
	// InboundDigest is triage.DigestOf the message this reply answers: a
	// sender that finds the reply already written for another message with
	// the same Key refuses it (ErrOtherInbound).
	InboundDigest string
	// Language is the customer's language (ISO 639-1, "" when unknown), as
	// the pipeline detected it in the message answered: a Signer signs the
	// reply in it, whatever language the body seems to be in.
	Language string
	// InboundFrom is the From address of the inbound message: for a reply,
	// the message it answers, and a per-sender limit counts the reply
	// against it as against To, so a Reply-To pointing elsewhere does not
	// dodge it; for a staff notice (Notice), the customer's message it is
	// about, and the per-customer notice bound counts it (a notice never
	// counts against the reply limits).
	InboundFrom string
	// ReplyTo, when set, is the Reply-To of the message ("Name <a@b>" or
	// "a@b"): a staff notice names the customer there, so staff answer
	// them directly.
	ReplyTo string
	// Notice marks a staff notice (notify_staff), not a reply to the
	// customer: senders that keep limits count it under their notice
	// bounds (triage.NoticeLimits), never against the reply limits.
	Notice bool
}

// Answers is the inbound From the per-sender limits count a reply against:
// "" for a staff notice, which they never count.
func (r *Reply) Answers() string {
	if r.Notice {
		return ""
	}
	return r.InboundFrom
}

// About is the customer a staff notice is about, whom the notice bounds
// count it against: "" for a reply.
func (r *Reply) About() string {
	if !r.Notice {
		return ""
	}
	return r.InboundFrom
}

// ErrOtherInbound: the reply with this Message-ID was written for another
// inbound message with the same Key (Message-ID and sender); answering this
// one would only report that reply again.
var ErrOtherInbound = errors.New("mail: a reply with this Message-ID already answers another message with the same Message-ID and sender")

// Sender delivers a rendered reply.
type Sender interface {
	Send(ctx context.Context, r *Reply) (triage.Receipt, error)
}

// Render produces the full RFC 5322 message: From, To, Reply-To (when
// set), Subject (RFC 2047 encoded when not ASCII), Date, Message-ID,
// In-Reply-To, References,
// Auto-Submitted: auto-replied, X-Auto-Response-Suppress: All, MIME-Version,
// Content-Type text/plain; charset=utf-8, quoted-printable body. Uses
// go-message for header encoding. Lines end in CRLF, the last one too.
//
// When r.MessageID is "" a random ID is generated and written back to
// r.MessageID (so the caller can report it); a zero r.Date becomes now.
func Render(r *Reply) ([]byte, error) {
	from, err := parseOne("From", r.From)
	if err != nil {
		return nil, err
	}
	to, err := parseOne("To", r.To)
	if err != nil {
		return nil, err
	}
	var replyTo *gomail.Address
	if r.ReplyTo != "" {
		if replyTo, err = parseOne("Reply-To", r.ReplyTo); err != nil {
			return nil, err
		}
		replyTo.Name = strings.Join(strings.Fields(replyTo.Name), " ")
	}
	if r.ToName != "" && to.Name == "" {
		to.Name = strings.Join(strings.Fields(r.ToName), " ") // one line, no control characters
	}
	if strings.ContainsAny(r.Subject, "\r\n") {
		return nil, errors.New("mail: Subject must be a single line")
	}
	subject := clip.Bytes(r.Subject, MaxSubjectBytes, "")
	if r.MessageID == "" {
		id, err := randomID(domainOf(from.Address))
		if err != nil {
			return nil, err
		}
		r.MessageID = id
	}
	if r.Date.IsZero() {
		r.Date = time.Now()
	}
	msgID, err := stripBrackets("Message-ID", r.MessageID)
	if err != nil {
		return nil, err
	}
	// The inbound thread is written by strangers: invalid IDs are dropped
	// and the list is trimmed, so a reply always renders, in linear time.
	var refs []string
	for _, ref := range ThreadReferences(r.References, "") {
		refs = append(refs, strings.Trim(ref, "<>"))
	}

	// go-message writes header fields in reverse order of addition: add the
	// last one first so the message reads From, To, Subject, ...
	var h gomail.Header
	h.Set("Content-Transfer-Encoding", "quoted-printable")
	h.SetContentType("text/plain", map[string]string{"charset": "utf-8"})
	h.Set("MIME-Version", "1.0")
	h.Set("X-Auto-Response-Suppress", "All")
	if r.Draft {
		h.Set("X-Unsent", "1") // mail clients open the file as a draft to send
	}
	h.Set("Auto-Submitted", "auto-replied")
	h.SetMsgIDList("References", refs)
	if id, ok := ValidMsgID(r.InReplyTo); ok {
		h.SetMsgIDList("In-Reply-To", []string{id})
	}
	h.SetMessageID(msgID)
	h.SetDate(r.Date)
	h.SetSubject(subject)
	if replyTo != nil {
		h.SetAddressList("Reply-To", []*gomail.Address{replyTo})
	}
	h.SetAddressList("To", []*gomail.Address{to})
	h.SetAddressList("From", []*gomail.Address{from})

	var buf bytes.Buffer
	w, err := gomail.CreateSingleInlineWriter(&buf, h)
	if err != nil {
		return nil, fmt.Errorf("mail: render: %w", err)
	}
	body := strings.ReplaceAll(strings.ReplaceAll(r.Body, "\r\n", "\n"), "\n", "\r\n")
	if !strings.HasSuffix(body, "\r\n") {
		body += "\r\n" // SMTP DATA would add it anyway; keep outbox and wire equal
	}
	if _, err := w.Write([]byte(body)); err != nil {
		return nil, fmt.Errorf("mail: render: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("mail: render: %w", err)
	}
	return buf.Bytes(), nil
}

// MessageIDFor derives a deterministic Message-ID from an inbound key and our
// domain: the same key always yields the same ID,
// "<triage-" + hex(sha256(key))[:24] + "@" + domain + ">".
func MessageIDFor(key triage.Key, domain string) string {
	sum := sha256.Sum256([]byte(key))
	return "<triage-" + hex.EncodeToString(sum[:])[:24] + "@" + domain + ">"
}

func randomID(domain string) (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("mail: message id: %w", err)
	}
	if domain == "" {
		domain = "localhost"
	}
	return "<triage-" + hex.EncodeToString(b[:]) + "@" + domain + ">", nil
}

func parseOne(field, s string) (*gomail.Address, error) {
	list, err := netmail.ParseAddressList(s)
	if err != nil {
		return nil, fmt.Errorf("mail: %s %q: %w", field, s, err)
	}
	if len(list) != 1 {
		return nil, fmt.Errorf("mail: %s %q: want one address, got %d", field, s, len(list))
	}
	return &gomail.Address{Name: list[0].Name, Address: list[0].Address}, nil
}

func stripBrackets(field, id string) (string, error) {
	id = strings.TrimSpace(id)
	id = strings.TrimSuffix(strings.TrimPrefix(id, "<"), ">")
	if id == "" || strings.ContainsAny(id, "<> \t\r\n") {
		return "", fmt.Errorf("mail: %s: bad message id %q", field, id)
	}
	return id, nil
}

func domainOf(addr string) string {
	if i := strings.LastIndexByte(addr, '@'); i >= 0 {
		return addr[i+1:]
	}
	return ""
}

// bareAddress returns the bare address of a one-address field value (From,
// To; a receipt reports To so).
func bareAddress(field, s string) (string, error) {
	a, err := parseOne(field, s)
	if err != nil {
		return "", err
	}
	return a.Address, nil
}

// Threading limits: RFC 5322 (3.6.4) lets a long References be trimmed; the
// usual practice keeps the thread's first message and the most recent ones.
const (
	MaxReferences = 21  // the first ID and the last 20
	MaxMsgIDBytes = 255 // longer "IDs" are dropped (a line holds 998 bytes)
	// MaxSubjectBytes caps a reply's subject; longer ones are cut.
	MaxSubjectBytes = 998
)

// ThreadReferences builds the References of a reply: the inbound References
// followed by the inbound Message-ID, without duplicates, empties or IDs
// that are not valid msg-ids, trimmed to the first ID and the last 20. IDs
// come back in angle brackets. It runs in linear time whatever the input.
func ThreadReferences(refs []string, id string) []string {
	n := len(refs) + 1
	at := func(i int) string {
		if i < len(refs) {
			return refs[i]
		}
		return id
	}
	first, firstID := -1, ""
	for i := 0; i < n && first < 0; i++ {
		if bare, ok := ValidMsgID(at(i)); ok {
			first, firstID = i, bare
		}
	}
	if first < 0 {
		return nil
	}
	// Walk back from the end: only the IDs kept are ever looked at twice.
	seen := map[string]bool{firstID: true}
	var tail []string
	for i := n - 1; i > first && len(tail) < MaxReferences-1; i-- {
		bare, ok := ValidMsgID(at(i))
		if !ok || seen[bare] {
			continue
		}
		seen[bare] = true
		tail = append(tail, "<"+bare+">")
	}
	out := make([]string, 0, len(tail)+1)
	out = append(out, "<"+firstID+">")
	for i := len(tail) - 1; i >= 0; i-- {
		out = append(out, tail[i])
	}
	return out
}

// ValidMsgID reports whether s is a msg-id (RFC 5322 3.6.4: id-left "@"
// id-right, with or without its angle brackets, at most MaxMsgIDBytes) and
// returns it without brackets. It refuses spaces, control characters,
// specials outside a domain literal and a missing or second "@".
func ValidMsgID(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "<") && strings.HasSuffix(s, ">") {
		s = s[1 : len(s)-1]
	}
	left, right, ok := strings.Cut(s, "@")
	if !ok || left == "" || right == "" || len(s) > MaxMsgIDBytes {
		return "", false
	}
	if literal := strings.HasPrefix(right, "[") && strings.HasSuffix(right, "]"); literal {
		right = right[1 : len(right)-1]
	}
	for _, part := range []string{left, right} {
		for i := 0; i < len(part); i++ {
			c := part[i]
			if c <= ' ' || c >= 0x7f || strings.IndexByte(`<>()[]\,;:@"`, c) >= 0 {
				return "", false
			}
		}
	}
	return s, true
}
