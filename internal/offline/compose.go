package offline

import (
	"fmt"
	"strings"

	"triage/internal/prompt"
)

// phrases is the fixed wording of a reply in one language.
type phrases struct {
	greeting, thanks                   string
	valid, validNoDate                 string // %s serial, %s date
	expired, expiredNoDate             string
	notFound                           string
	otherStatus                        string // %s serial, %s status
	checkFailed                        string // %s serial
	ticket                             string // %s ticket id
	ticketFailed                       string
	consultant                         string
	askSerial, outOfScope, acknowledge string
	paidRepair                         string
	closing, team, automatic           string
}

var polish = phrases{
	greeting:      "Dzień dobry,",
	thanks:        "dziękujemy za wiadomość.",
	valid:         "Gwarancja dla urządzenia o numerze seryjnym %s jest ważna do %s.",
	validNoDate:   "Gwarancja dla urządzenia o numerze seryjnym %s jest ważna.",
	expired:       "Gwarancja dla urządzenia o numerze seryjnym %s wygasła %s.",
	expiredNoDate: "Gwarancja dla urządzenia o numerze seryjnym %s wygasła.",
	notFound:      "Nie znaleźliśmy numeru seryjnego %s w naszym rejestrze. Prosimy o sprawdzenie numeru na etykiecie urządzenia lub na dowodzie zakupu i przesłanie go w odpowiedzi na tę wiadomość.",
	otherStatus:   "Status gwarancji dla urządzenia o numerze seryjnym %s: %s.",
	checkFailed:   "Nie udało nam się teraz automatycznie sprawdzić gwarancji dla numeru seryjnego %s.",
	ticket:        "Utworzyliśmy zgłoszenie %s. Prosimy podawać ten numer w dalszej korespondencji.",
	ticketFailed:  "Nie udało nam się teraz automatycznie utworzyć zgłoszenia serwisowego.",
	consultant:    "Nasz konsultant sprawdzi sprawę i odpowie Państwu osobiście.",
	askSerial:     "Aby sprawdzić gwarancję, potrzebujemy numeru seryjnego urządzenia. Znajdą go Państwo na etykiecie z tyłu lub na spodzie urządzenia, a także na paragonie lub fakturze zakupu. Prosimy o przesłanie go w odpowiedzi na tę wiadomość.",
	outOfScope:    "Ta skrzynka obsługuje wyłącznie sprawy gwarancyjne i reklamacyjne, dlatego nie możemy tutaj pomóc w tej sprawie. Jeśli chodzi o gwarancję lub naprawę urządzenia, prosimy odpowiedzieć na tę wiadomość i podać numer seryjny.",
	acknowledge:   "Potwierdzamy otrzymanie wiadomości. Konsultant odpowie Państwu w ciągu 2 dni roboczych.",
	paidRepair:    "Możemy zaproponować płatną naprawę. Jeśli są Państwo zainteresowani, prosimy o odpowiedź na tę wiadomość, a przygotujemy wycenę.",
	closing:       "Z poważaniem",
	team:          "Zespół serwisu gwarancyjnego",
	automatic:     "(Odpowiedź przygotowana automatycznie przez model offline triage.)",
}

var english = phrases{
	greeting:      "Hello,",
	thanks:        "thank you for your message.",
	valid:         "The warranty for the device with serial number %s is valid until %s.",
	validNoDate:   "The warranty for the device with serial number %s is valid.",
	expired:       "The warranty for the device with serial number %s expired on %s.",
	expiredNoDate: "The warranty for the device with serial number %s has expired.",
	notFound:      "Serial number %s was not found in our warranty register. Please check the number on the device label or on your proof of purchase and send it in reply to this message.",
	otherStatus:   "Warranty status for the device with serial number %s: %s.",
	checkFailed:   "We could not check the warranty for serial number %s automatically right now.",
	ticket:        "We opened ticket %s. Please quote this number in any further correspondence.",
	ticketFailed:  "We could not open a service ticket automatically right now.",
	consultant:    "A consultant will check it and reply to you personally.",
	askSerial:     "To check the warranty we need the device's serial number. You will find it on the label on the back or bottom of the device, and on the receipt or invoice. Please send it in reply to this message.",
	outOfScope:    "This mailbox handles warranty and repair matters only, so we cannot help with this request here. If your question is about a warranty or a repair, please reply to this message with the serial number.",
	acknowledge:   "We confirm that we have received your message. A consultant will reply within 2 business days.",
	paidRepair:    "We can offer a paid repair. If you are interested, please reply to this message and we will prepare a quote.",
	closing:       "Kind regards,",
	team:          "Warranty Support Team",
	automatic:     "(This reply was prepared automatically by the triage offline model.)",
}

func phrasesFor(lang string) phrases {
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(lang)), "en") {
		return english
	}
	return polish
}

// composeBody writes the plain-text reply from the facts and the function
// results; nothing of the customer's text is copied into it.
func composeBody(f prompt.Facts, h *history, fns map[string]bool) string {
	p := phrasesFor(f.Language)
	paras := []string{p.greeting, p.thanks}
	failed, expired, notFound := false, false, false

	var lines []string
	for _, c := range h.named(fnCheckWarranty) {
		sn := c.str("serial_number")
		if !c.ok {
			failed = true
			lines = append(lines, fmt.Sprintf(p.checkFailed, sn))
			continue
		}
		date := c.str("expiration_date")
		switch st := c.str("status"); st {
		case "valid":
			lines = append(lines, withDate(p.valid, p.validNoDate, sn, date))
		case "expired":
			expired = true
			lines = append(lines, withDate(p.expired, p.expiredNoDate, sn, date))
		case "not_found":
			notFound = true
			lines = append(lines, fmt.Sprintf(p.notFound, sn))
		default:
			lines = append(lines, fmt.Sprintf(p.otherStatus, sn, st))
		}
	}
	if len(lines) > 0 {
		paras = append(paras, strings.Join(lines, "\n"))
	}

	if tickets := h.named(fnCreateTicket); len(tickets) > 0 {
		t := tickets[0]
		switch id := t.str("ticket_id"); {
		case !t.ok:
			failed = true
			paras = append(paras, p.ticketFailed)
		case id != "":
			paras = append(paras, fmt.Sprintf(p.ticket, id))
		}
	}

	scenario := f.Scenario
	if failed && scenario != "graceful-degradation" {
		paras = append(paras, p.consultant)
	}
	askSerial := scenario == "missing-info" ||
		(fns[fnCheckWarranty] && len(f.SerialNumbers) == 0 && scenario != "out-of-scope" && scenario != "graceful-degradation")
	if askSerial {
		paras = append(paras, p.askSerial)
	}
	switch scenario {
	case "out-of-scope":
		paras = append(paras, p.outOfScope)
	case "graceful-degradation":
		paras = append(paras, p.acknowledge)
	}
	if expired || (scenario == "invalid-warranty" && notFound) {
		paras = append(paras, p.paidRepair)
	}
	paras = append(paras, p.closing+"\n"+p.team, p.automatic)
	return strings.Join(paras, "\n\n") + "\n"
}

func withDate(withFmt, withoutFmt, serial, date string) string {
	if date == "" {
		return fmt.Sprintf(withoutFmt, serial)
	}
	return fmt.Sprintf(withFmt, serial, date)
}
