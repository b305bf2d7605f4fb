package guard

import (
	"testing"

	"triage"
	"triage/internal/message"
)

// TestAutoreplySubject: auto-replies without RFC 3834 headers are known by
// their subject's marker; people's subjects are not.
func TestAutoreplySubject(t *testing.T) {
	skipped := []string{
		"Automatic reply: Reklamacja SN-48213-PL",     // Outlook, English
		"AUTOMATIC REPLY: Re: warranty",               // letter case
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

// TestSubjectMarkersAndCustomers checks the marker list against what
// Polish, English and German customers write: a marker never skips a
// message whose own text has a serial number, and a weak marker ("Auto:",
// a car in Polish and German) skips only what its headers and structure
// show to be an automatic answer, whatever its text says.
func TestSubjectMarkersAndCustomers(t *testing.T) {
	const person = "Dzień dobry, proszę o pomoc."
	tests := []struct {
		subject, text string
		answers       bool // In-Reply-To set: it answers a message
		header        string
		skip          bool
	}{
		// Customers.
		{"Auto: radio samochodowe nie działa, SN-48213-PL", "Dzień dobry, radio w aucie nie działa. Proszę o naprawę.", false, "", false},
		{"Auto: radio samochodowe nie działa, SN-48213-PL", "", false, "", false},
		{"Auto: klimatyzacja dmucha ciepłym powietrzem", "Dzień dobry, klimatyzacja w moim aucie nie chłodzi od tygodnia.", false, "", false},
		{"Auto: nawigacja się zawiesza", "", false, "", false},
		{"Auto: car charger stopped working", "Hello, the charger you sold me for my car does not charge my phone any more.", false, "", false},
		{"Auto: Radio defekt", "Guten Tag, das Radio in meinem Auto ist nach zwei Wochen kaputt.", false, "", false},
		{"Auto nie odpala po wymianie akumulatora", person, false, "", false},
		{"Autoradio nie działa", person, false, "", false},
		{"Out of office hours support?", "Hello, can I call you after 6 pm?", false, "", false},
		{"Poza biurem nikt nie odbiera telefonu", person, false, "", false},
		{"Automatic reply: Reklamacja", "Mój ekspres SN-48213-PL nadal przecieka, proszę o kontakt.", false, "", false},
		{"Auto: Reklamacja SN-48213-PL", "Jestem na urlopie do 17 marca.", true, "", false},
		{"Abwesend: Garantie SN-48213-PL", "Ich bin im Urlaub bis 17.03.", true, "", false},
		// People whose words sound like an absence notice.
		{"Auto: radio nie działa po powrocie z urlopu", "Dzień dobry, po powrocie z urlopu radio w aucie przestało działać.", false, "", false},
		{"Auto: dashcam stopped recording", "While I was on holiday the dashcam stopped recording. I will be back on Monday.", false, "", false},
		{"Auto: Reklamacja", "Jestem na urlopie do 17 marca. W pilnych sprawach proszę pisać do biura.", false, "", false},
		{"Abwesend: Garantie", "Ich bin im Urlaub bis 17.03. und ab 18.03. wieder im Büro.", false, "", false},
		// Automatic answers, by their headers and structure.
		{"Auto: Reklamacja", "Jestem na urlopie do 17 marca. W pilnych sprawach proszę pisać do biura.", true, "", true},
		{"Auto: Warranty claim", "I will be out of the office until March 17 with limited access to email.", true, "", true},
		{"Auto: Warranty claim", "Thank you for your message.", false, "X-MS-Exchange-Inbox-Rules-Loop", true},
		{"Abwesend: Garantie", "", false, "X-MS-Exchange-Generated-Message-Source", true},
		{"Frånvaro: Garanti", "Jag är frånvarande till den 17 mars.", true, "", true},
		{"Fraværende: Garanti", "Jeg er på ferie til 17. mars.", true, "", true},
		{"Poissa: Takuu", "Olen lomalla 17.3. asti.", true, "", true},
		{"Automatic reply: Reklamacja SN-48213-PL", "I am away until Monday.", false, "", true},
		{"Odpowiedź automatyczna: Re: Naprawa SN-48213-PL", "", false, "", true},
	}
	for _, tt := range tests {
		m := subjectMsg(tt.subject)
		m.Text = tt.text
		if tt.answers {
			m.InReplyTo = "<reply-1@example.com>"
		}
		if tt.header != "" {
			m.Header[canonicalKey(tt.header)] = []string{"anna@example.pl"}
		}
		v := Check(cfg, m)
		if v.Skip != tt.skip || (v.Skip && v.Reason != triage.ReasonAutoreplySubject) {
			t.Errorf("%q / %q (answers %v, %s): verdict %+v, want skip=%v", tt.subject, tt.text, tt.answers, tt.header, v, tt.skip)
		}
	}
}

func subjectMsg(subject string) *message.Message {
	m := &message.Message{Subject: subject, Header: map[string][]string{"Subject": {subject}}}
	m.From.Address = "anna@example.pl"
	m.ReplyTo = "anna@example.pl"
	return m
}
