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
var autoreplyMarkers = []string{
	// English
	"automatic reply", "auto reply", "auto-reply", "autoreply", "auto response", "auto-response",
	"autoresponse", "auto:", "out of office", "out of the office", "away from the office",
	"vacation reply",
	// Polish
	"odpowiedź automatyczna", "automatyczna odpowiedź", "autoodpowiedź", "poza biurem",
	"nieobecność w biurze",
	// German
	"automatische antwort", "abwesenheitsnotiz", "automatische abwesenheitsnotiz", "autom. antwort",
	"abwesend:", "nicht im büro",
	// French
	"réponse automatique", "reponse automatique", "absence du bureau", "absent du bureau",
	"message d'absence",
	// Swedish, Norwegian, Danish
	"autosvar", "automatiskt svar", "automatisk svar", "automatisk besked", "frånvaro:",
	"frånvaromeddelande", "fraværende:", "fraværsmelding", "fraværsbesked", "ikke på kontoret",
	"ikke til stede:",
	// Finnish
	"automaattinen vastaus", "poissa:", "poissa toimistolta", "lomavastaus",
	// Dutch, Spanish, Italian, Portuguese, Czech, Slovak
	"automatisch antwoord", "afwezig:", "respuesta automática", "fuera de la oficina",
	"risposta automatica", "fuori sede", "fuori ufficio", "resposta automática",
	"automatická odpověď", "automatická odpoveď",
}

func autoreplySubject(_ Config, m *message.Message) (Verdict, bool) {
	s := strings.ToLower(strings.Join(strings.Fields(m.Subject), " "))
	if s == "" {
		return Verdict{}, false
	}
	// French typography puts a space before the colon.
	s = strings.ReplaceAll(s, " :", ":")
	for _, mk := range autoreplyMarkers {
		rest, ok := strings.CutPrefix(s, mk)
		if !ok {
			continue
		}
		if strings.HasSuffix(mk, ":") || markerEnds(rest) {
			return skip(triage.ReasonAutoreplySubject, "Subject", m.Subject)
		}
	}
	return Verdict{}, false
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
