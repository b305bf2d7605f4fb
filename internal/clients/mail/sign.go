package mail

import (
	"cmp"
	"context"
	"fmt"
	netmail "net/mail"
	"strings"

	"triage"
)

// Style is how replies in one language are signed: the From display name,
// the signature appended to the body, and the disclosure, a line saying
// that an AI system wrote the reply, put above the signature ("": none).
type Style struct {
	FromName   string
	Signature  string
	Disclosure string
}

// Signer is a Sender that signs each reply in the language its body is
// written in, then hands it to Next: the model writes the substance, the
// pipeline the disclosure, the signature and the From display name, all in
// the body's language, so a reply is in one language. A signature or
// disclosure already in the body (a line that is any configured one: the
// model wrote it anyway, or the reply was signed before) is removed first,
// so a reply carries each once, in its own language.
type Signer struct {
	Next Sender
	// Styles by language code. A reply is signed in Styles[L], L the
	// language Language finds its body clearly written in; when it finds
	// none, or Styles has no entry for it, in Reply.Language (the language
	// the reply was to be written in), or without one in the language
	// Language named anyway; and in Default when Styles has no entry for
	// that.
	Styles map[string]Style
	// Language is the language body is clearly written in (told), or the
	// language to assume when it cannot be told (optional).
	Language func(body string) (lang string, told bool)
	Default  string
}

var _ Sender = (*Signer)(nil)

// Send signs r and passes a signed copy to Next. A staff notice
// (r.Notice) goes to Next as it is: it is triage's own text to staff, and
// quotes the customer's words unchanged.
func (s *Signer) Send(ctx context.Context, r *Reply) (triage.Receipt, error) {
	if r.Notice {
		return s.Next.Send(ctx, r)
	}
	signed := *r
	body := strings.TrimRight(strings.ReplaceAll(r.Body, "\r\n", "\n"), " \t\n")
	for _, other := range s.Styles {
		for _, line := range []string{other.Signature, other.Disclosure} {
			if line = strings.TrimSpace(line); line != "" {
				body = dropLines(body, line)
			}
		}
	}
	lang, told := "", false
	if s.Language != nil {
		lang, told = s.Language(body)
	}
	if _, styled := s.Styles[lang]; !told || !styled {
		lang = cmp.Or(strings.ToLower(strings.TrimSpace(r.Language)), lang)
	}
	st, ok := s.Styles[lang]
	if !ok {
		st = s.Styles[s.Default]
	}
	if d := strings.TrimSpace(st.Disclosure); d != "" {
		body += "\n\n" + d
	}
	if sig := strings.TrimSpace(st.Signature); sig != "" {
		body += "\n\n" + sig
	}
	signed.Body = body + "\n"
	if st.FromName != "" {
		a, err := netmail.ParseAddress(r.From)
		if err != nil {
			return triage.Receipt{}, fmt.Errorf("mail: From %q: %w", r.From, err)
		}
		signed.From = (&netmail.Address{Name: st.FromName, Address: a.Address}).String()
	}
	rc, err := s.Next.Send(ctx, &signed)
	r.MessageID = signed.MessageID // Render may have generated it
	return rc, err
}

// dropLines removes the lines of body that are exactly sig (a signature or
// disclosure the model wrote although told not to, or one added before),
// with the blank line left behind.
func dropLines(body, sig string) string {
	if !strings.Contains(body, sig) {
		return body
	}
	lines := strings.Split(body, "\n")
	out := lines[:0]
	for _, l := range lines {
		if strings.TrimSpace(l) == sig {
			continue
		}
		out = append(out, l)
	}
	body = strings.Join(out, "\n")
	for strings.Contains(body, "\n\n\n") {
		body = strings.ReplaceAll(body, "\n\n\n", "\n\n")
	}
	return strings.TrimRight(body, " \t\n")
}
