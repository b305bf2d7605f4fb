// What the receiving server's Authentication-Results (RFC 8601) say of the
// From domain, and where a reply may therefore go.

package message

import (
	"fmt"
	"slices"
	"strings"

	"github.com/emersion/go-msgauth/authres"
)

// Authentication is what the trusted Authentication-Results fields say of
// the message's From domain.
type Authentication struct {
	// Pass: DMARC passed for the From domain, or a DKIM signature of the
	// From domain itself (header.d equal to it: strict alignment) passed.
	Pass bool
	// Method is what passed ("dmarc" or "dkim"), "" when nothing did.
	Method string
	// Detail says what was found, for an outcome or a log line.
	Detail string
}

// Authenticated reads the Authentication-Results fields at the top of the
// header whose authserv-id is one of trusted (case-insensitive): the
// receiving server adds its own above everything the sender wrote, so
// reading stops at the first field with another authserv-id (a stranger can
// write a field naming any server below), and the first field with a DMARC
// (or a DKIM) verdict decides it: a later one claiming a pass is not read.
// Without trusted, or without such a field on top, nothing is
// authenticated. A message whose From fields name more than one mailbox is
// never authenticated. The server must delete fields from outside that
// claim its authserv-id (RFC 8601, section 5).
func (m *Message) Authenticated(trusted []string) Authentication {
	if len(trusted) == 0 {
		return Authentication{Detail: "no trusted authserv-id is configured"}
	}
	domain := domainOf(m.From.Address)
	if domain == "" || m.FromMailboxes != 1 {
		return Authentication{Detail: "no single From address to authenticate"}
	}
	read := 0
	var dmarcSeen, dkimSeen bool // the first field with a verdict of a kind decides it
	for _, v := range m.Header["Authentication-Results"] {
		id, results, _ := authres.Parse(stripComments(v)) // what parsed before an error still counts
		if !slices.ContainsFunc(trusted, func(t string) bool { return strings.EqualFold(strings.TrimSpace(t), id) }) {
			break
		}
		read++
		var dmarc, dkim bool // this field has a verdict of the kind
		for _, r := range results {
			switch r := r.(type) {
			case *authres.DMARCResult:
				dmarc = true
				if !dmarcSeen && r.Value == authres.ResultPass && (r.From == "" || strings.EqualFold(r.From, domain)) {
					return Authentication{Pass: true, Method: "dmarc", Detail: fmt.Sprintf("%s: dmarc=pass for %s", id, domain)}
				}
			case *authres.DKIMResult:
				dkim = true
				if !dkimSeen && r.Value == authres.ResultPass && strings.EqualFold(r.Domain, domain) {
					return Authentication{Pass: true, Method: "dkim", Detail: fmt.Sprintf("%s: dkim=pass header.d=%s", id, domain)}
				}
			}
		}
		dmarcSeen, dkimSeen = dmarcSeen || dmarc, dkimSeen || dkim
	}
	if read == 0 {
		return Authentication{Detail: "no Authentication-Results field of a trusted authserv-id on top of the header"}
	}
	return Authentication{Detail: fmt.Sprintf("neither DMARC nor a DKIM signature of %s passed in the trusted Authentication-Results", domain)}
}

// ReplyAddress is where a reply to m may go: its Reply-To when that is in
// the From address's domain, or when the From domain is authenticated
// (auth.Pass); else the From address, with why the Reply-To was set aside
// (note is "" when it was not). A Reply-To elsewhere that a stranger
// wrote would have triage mail whomever they name.
func (m *Message) ReplyAddress(auth Authentication) (addr, note string) {
	if m.ReplyTo == "" || strings.EqualFold(m.ReplyTo, m.From.Address) {
		return m.From.Address, ""
	}
	if d := domainOf(m.ReplyTo); d != "" && d == domainOf(m.From.Address) {
		return m.ReplyTo, ""
	}
	if auth.Pass {
		return m.ReplyTo, ""
	}
	return m.From.Address, fmt.Sprintf("Reply-To %s is outside the From domain and the message is not authenticated (%s): answered at the From address", m.ReplyTo, auth.Detail)
}

// domainOf is the lower-cased domain of a bare address ("" when none).
func domainOf(addr string) string {
	i := strings.LastIndexByte(addr, '@')
	if i < 0 {
		return ""
	}
	return strings.ToLower(strings.TrimSuffix(strings.TrimSpace(addr[i+1:]), "."))
}

// stripComments removes RFC 5322 comments ("(1024-bit key; unprotected)",
// nested, with quoted-pairs) outside quoted strings: authres splits results
// at every ";", a comment's included.
func stripComments(v string) string {
	var b strings.Builder
	depth, quoted, escaped := 0, false, false
	for _, r := range v {
		if depth > 0 {
			switch {
			case escaped:
				escaped = false
			case r == '\\':
				escaped = true
			case r == '(':
				depth++
			case r == ')':
				depth--
			}
			continue
		}
		switch {
		case escaped:
			escaped = false
		case quoted && r == '\\':
			escaped = true
		case quoted && r == '"':
			quoted = false
		case quoted:
		case r == '"':
			quoted = true
		case r == '(':
			depth = 1
			r = ' ' // a comment separates what is around it
		}
		b.WriteRune(r)
	}
	return b.String()
}
