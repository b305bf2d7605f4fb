package processor

import (
	"strings"

	"triage/internal/clients/tickets"
)

// replyLanguage is the language a reply to a customer writing in lang is
// written and signed in: lang when main.md's replies: has a style for it
// (or has none at all), else replies_fallback, else the inbox's default.
// The facts block gives it to the model as `language`; send_email refuses
// a reply in any language but it or the default.
func (p *Processor) replyLanguage(lang string) string {
	set := p.cfg.Scenarios
	if set == nil || len(set.Replies) == 0 {
		return lang
	}
	if _, ok := set.Replies[lang]; ok {
		return lang
	}
	if _, ok := set.Replies[set.RepliesFallback]; ok {
		return set.RepliesFallback
	}
	return p.cfg.Language.Default()
}

// conversationLanguage tells the language of the customer's earlier
// messages in conv (the texts triage noted on the ticket), for a message
// whose own language could not be told: "" when they cannot tell it
// either.
func (p *Processor) conversationLanguage(conv *tickets.State, current string) string {
	notes := map[string]string{}
	for _, n := range conv.Notes {
		notes[n.MessageID] = n.Text
	}
	var texts []string
	for _, m := range conv.Messages {
		if m.Direction == tickets.Inbound && m.MessageID != current && m.From != NoteAuthor {
			texts = append(texts, m.Subject, notes[m.MessageID])
		}
	}
	if r := p.cfg.Language.Judge(strings.Join(texts, "\n")); r.Sure {
		return r.Code
	}
	return ""
}
