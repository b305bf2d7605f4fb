package guard

import (
	"testing"

	"triage"
	"triage/internal/message"
)

// TestAutoreplySubject: auto-replies without RFC 3834 headers are known by
// their subject's marker (issue 7 item 4); people's subjects are not.
func TestAutoreplySubject(t *testing.T) {
	skipped := []string{
		"Automatic reply: Reklamacja SN-48213-PL",     // Outlook, English
		"AUTOMATIC REPLY: Re: warranty",               // letter case
		"Auto: Reklamacja",                            // Lotus Notes / Domino
		"Auto-Reply: I'm out of office.",              // many vacation scripts
		"Autoreply: away",                             //
		"Out of Office: Reklamacja",                   // Exchange OOF
		"Out of Office Reply",                         //
		"Out of Office AutoReply: Reklamacja",         //
		"Automatic reply",                             // no original subject
		"Odpowiedź automatyczna: Reklamacja ekspresu", // Outlook, Polish
		"Automatyczna odpowiedź: Re: Naprawa",         // Polish, other order
		"Poza biurem: Reklamacja",                     // Polish out of office
		"Abwesenheitsnotiz: Reklamation",              // German
		"Automatische Antwort: Garantie",              // Outlook, German
		"Réponse automatique : Garantie",              // Outlook, French (space before colon)
		"Réponse automatique: Garantie",               //
		"Absence du bureau : Garantie",                // French out of office
		"Autosvar: Garanti",                           // Swedish / Norwegian / Danish
		"Automatiskt svar: Garanti",                   // Outlook, Swedish
		"Automatisk svar: Garanti",                    // Outlook, Norwegian / Danish
		"Frånvaro: Garanti",                           // Swedish absence
		"Fraværende: Garanti",                         // Norwegian
		"Poissa: Takuu",                               // Finnish away
		"Automaattinen vastaus: Takuu",                // Outlook, Finnish
		"Automatisch antwoord: Garantie",              // Outlook, Dutch
		"Respuesta automática: Garantía",              // Outlook, Spanish
		"Risposta automatica: Garanzia",               // Outlook, Italian
		"Automatická odpověď: Záruka",                 // Outlook, Czech
		"  Automatic   reply:   extra spaces",         //
	}
	for _, s := range skipped {
		v := Check(cfg, subjectMsg(s))
		if !v.Skip || v.Reason != triage.ReasonAutoreplySubject || v.Detail != "Subject: "+s {
			t.Errorf("%q: verdict %+v, want skip %s", s, v, triage.ReasonAutoreplySubject)
		}
	}
	answered := []string{
		"Reklamacja ekspresu",
		"Re: Automatic reply: warranty", // a person replying to an auto-reply
		"Automatic coffee machine broken",
		"Autoryzowany serwis?",
		"Automatyczny ekspres nie działa",
		"Auto warranty question",
		"Autos: three of them",
		"Poissant espresso machine",
		"Outlook broke my mail",
		"Out of office hours support?",
		"Poza biurem nikt nie odbiera telefonu", // "nobody answers the phone outside the office"
		"",
	}
	for _, s := range answered {
		if v := Check(cfg, subjectMsg(s)); v.Skip {
			t.Errorf("%q: skipped %+v, want answered", s, v)
		}
	}
}

func subjectMsg(subject string) *message.Message {
	m := &message.Message{Subject: subject, Header: map[string][]string{"Subject": {subject}}}
	m.From.Address = "anna@example.pl"
	m.ReplyTo = "anna@example.pl"
	return m
}
