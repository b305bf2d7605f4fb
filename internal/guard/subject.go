package guard

import (
	"strings"

	"triage"
	"triage/internal/message"
)

// autoreplyMarkers are the subject prefixes auto-responders put before the
// original subject (Outlook/Exchange in the user's language, Lotus Notes,
// Gmail and server-side vacation scripts), lower-cased. A marker matches at
// the start of the subject when a colon, the end of the subject or a word
// like "reply" follows: "Out of Office: x" and "Out of Office Reply" match,
// "Out of office hours?" and "Automatic coffee machine" do not, since a
// customer left unanswered is worse than one auto-reply answered (the
// reply-loop rule and the per-sender limits catch the rest).
//
// Which customers a marker never skips:
//   - A message whose own text (quoted history aside) has a serial number
//     is a customer's, whatever its subject: auto-replies quote, they do not
//     write new text about a device.
//   - weakMarkers are also words customers start subjects with ("Auto:" is
//     a car in Polish, German, Dutch, Czech; "Poissa" or "Abwesend" can head
//     a complaint). They skip only what the headers and structure show to
//     be an automatic answer (autoAnswerSigns), and never a message with a
//     serial number in its subject: what the text says (a holiday, coming
//     back) is a person's words as often as a responder's, and decides
//     nothing.
var autoreplyMarkers = []string{
	// English
	"automatic reply", "auto reply", "auto-reply", "autoreply", "auto response", "auto-response",
	"autoresponse", "out of office", "out of the office", "away from the office",
	"vacation reply",
	// Polish
	"odpowiedź automatyczna", "automatyczna odpowiedź", "autoodpowiedź", "poza biurem",
	"nieobecność w biurze",
	// German
	"automatische antwort", "abwesenheitsnotiz", "automatische abwesenheitsnotiz", "autom. antwort",
	"nicht im büro",
	// French
	"réponse automatique", "reponse automatique", "absence du bureau", "absent du bureau",
	"message d'absence",
	// Swedish, Norwegian, Danish
	"autosvar", "automatiskt svar", "automatisk svar", "automatisk besked",
	"frånvaromeddelande", "fraværsmelding", "fraværsbesked", "ikke på kontoret",
	// Finnish
	"automaattinen vastaus", "poissa toimistolta", "lomavastaus",
	// Dutch, Spanish, Italian, Portuguese, Czech, Slovak
	"automatisch antwoord", "respuesta automática", "fuera de la oficina",
	"risposta automatica", "fuori sede", "fuori ufficio", "resposta automática",
	"automatická odpověď", "automatická odpoveď",
}

// weakMarkers are markers that are also ordinary words (see
// autoreplyMarkers): Lotus Notes' "Auto:", and the one-word absence
// prefixes of some clients.
var weakMarkers = []string{"auto:", "abwesend:", "frånvaro:", "fraværende:", "ikke til stede:", "poissa:", "afwezig:"}

// exchangeRuleHeaders are set by Exchange on mail its mailbox rules
// generate (an out-of-office or auto-reply rule).
var exchangeRuleHeaders = []string{"X-Ms-Exchange-Inbox-Rules-Loop", "X-Ms-Exchange-Generated-Message-Source"}

// autoAnswerSigns reports whether a message with a weak marker is an
// automatic answer by its headers and structure: Exchange's rule headers,
// or it answers a message (In-Reply-To or References) with the marker
// where a person's reply has "Re:". A person's new message about their
// car has neither.
func autoAnswerSigns(m *message.Message) bool {
	for _, k := range exchangeRuleHeaders {
		if len(m.Header[k]) > 0 {
			return true
		}
	}
	return m.InReplyTo != "" || len(m.References) > 0
}

func autoreplySubject(cfg Config, m *message.Message) (Verdict, bool) {
	s := strings.ToLower(strings.Join(strings.Fields(m.Subject), " "))
	if s == "" {
		return Verdict{}, false
	}
	// French typography puts a space before the colon.
	s = strings.ReplaceAll(s, " :", ":")
	weak := false
	found := false
	for _, mk := range autoreplyMarkers {
		if rest, ok := strings.CutPrefix(s, mk); ok && markerEnds(rest) {
			found = true
			break
		}
	}
	for _, mk := range weakMarkers {
		if !found && strings.HasPrefix(s, mk) {
			found, weak = true, true
		}
	}
	if !found || hasSerial(cfg, m.Text) {
		return Verdict{}, false
	}
	if weak && (hasSerial(cfg, m.Subject) || !autoAnswerSigns(m)) {
		return Verdict{}, false
	}
	return skip(triage.ReasonAutoreplySubject, "Subject", m.Subject)
}

func hasSerial(cfg Config, text string) bool {
	return cfg.HasSerial != nil && strings.TrimSpace(text) != "" && cfg.HasSerial(text)
}

// markerFollowers may come between a marker and its colon ("Out of Office
// AutoReply: ...").
var markerFollowers = []string{"reply", "autoreply", "auto reply", "auto-reply", "notice", "notification", "message", "antwort", "svar", "vastaus"}

// markerEnds reports whether rest, the text after a marker, ends it: the end
// of the subject, a colon, or a follower word then the end or a colon.
func markerEnds(rest string) bool {
	rest = strings.TrimLeft(rest, " ")
	if rest == "" || strings.HasPrefix(rest, ":") {
		return true
	}
	for _, f := range markerFollowers {
		if after, ok := strings.CutPrefix(rest, f); ok {
			after = strings.TrimLeft(after, " ")
			if after == "" || strings.HasPrefix(after, ":") {
				return true
			}
		}
	}
	return false
}
