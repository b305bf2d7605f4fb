// The body of the reply the offline model writes, in the customer's
// language.

package model

import (
	"fmt"
	"strings"

	"google.golang.org/genai"

	"triage/internal/instructions"
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
	stepFailed                         string
	consultant                         string // a person follows up: only after staff were told
	retryLater                         string // after a failure, when no person was told
	askSerial, outOfScope, acknowledge string
	personReplies                      string // after acknowledge, when staff were told
	paidRepair                         string
	statutory                          string // the guarantee expired, the seller's statutory liability runs
	proofOfPurchase                    string // the decision needs the purchase's proof first
	found                              string
	attachments                        string // %d attachments the stand-in did not read
	automatic                          string
}

var polish = phrases{
	greeting:        "Dzień dobry,",
	thanks:          "dziękujemy za wiadomość.",
	valid:           "Gwarancja dla urządzenia o numerze seryjnym %s jest ważna do %s.",
	validNoDate:     "Gwarancja dla urządzenia o numerze seryjnym %s jest ważna.",
	expired:         "Gwarancja dla urządzenia o numerze seryjnym %s wygasła %s.",
	expiredNoDate:   "Gwarancja dla urządzenia o numerze seryjnym %s wygasła.",
	notFound:        "Nie znaleźliśmy numeru seryjnego %s w naszym rejestrze. Prosimy o sprawdzenie numeru na etykiecie urządzenia lub na dowodzie zakupu i przesłanie go w odpowiedzi na tę wiadomość.",
	otherStatus:     "Status gwarancji dla urządzenia o numerze seryjnym %s: %s.",
	checkFailed:     "Nie udało nam się teraz automatycznie sprawdzić gwarancji dla numeru seryjnego %s.",
	ticket:          "Utworzyliśmy zgłoszenie %s. Prosimy podawać ten numer w dalszej korespondencji.",
	stepFailed:      "Nie udało nam się teraz automatycznie wykonać wszystkich kroków (na przykład utworzyć zgłoszenia serwisowego).",
	consultant:      "Nasz konsultant sprawdzi sprawę i odpowie Państwu osobiście.",
	retryLater:      "Prosimy odpowiedzieć na tę wiadomość nieco później, a spróbujemy ponownie.",
	askSerial:       "Aby sprawdzić gwarancję, potrzebujemy numeru seryjnego urządzenia. Znajdą go Państwo na etykiecie z tyłu lub na spodzie urządzenia, a także na paragonie lub fakturze zakupu. Prosimy o przesłanie go w odpowiedzi na tę wiadomość.",
	outOfScope:      "Ta skrzynka obsługuje wyłącznie sprawy gwarancyjne i reklamacyjne, dlatego nie możemy tutaj pomóc w tej sprawie. Jeśli chodzi o gwarancję lub naprawę urządzenia, prosimy odpowiedzieć na tę wiadomość i podać numer seryjny.",
	acknowledge:     "Potwierdzamy otrzymanie wiadomości.",
	personReplies:   "Konsultant zapozna się z nią i odpowie Państwu osobiście.",
	paidRepair:      "Możemy zaproponować płatną naprawę. Jeśli są Państwo zainteresowani, prosimy o odpowiedź na tę wiadomość, a przygotujemy wycenę.",
	statutory:       "Urządzenie jest jednak nadal objęte ustawową odpowiedzialnością sprzedawcy za zgodność towaru z umową. W jej ramach bezpłatnie naprawimy urządzenie lub wymienimy je na nowe. Prosimy o odpowiedź na tę wiadomość, a przekażemy dalsze kroki.",
	proofOfPurchase: "Aby ustalić, czy urządzenie jest objęte ustawową odpowiedzialnością sprzedawcy, prosimy o przesłanie dowodu zakupu (paragonu lub faktury) z datą zakupu i dostawy w odpowiedzi na tę wiadomość.",
	found:           "Oto, co znaleźliśmy w naszych materiałach:",
	attachments:     "(Model offline nie ogląda załączników: przesłane zdjęcia lub dokumenty (%d) nie zostały odczytane. W razie potrzeby obejrzy je konsultant.)",
	automatic:       "(Odpowiedź przygotowana automatycznie przez model offline triage, zastępczy model bez AI.)",
}

var english = phrases{
	greeting:        "Hello,",
	thanks:          "thank you for your message.",
	valid:           "The warranty for the device with serial number %s is valid until %s.",
	validNoDate:     "The warranty for the device with serial number %s is valid.",
	expired:         "The warranty for the device with serial number %s expired on %s.",
	expiredNoDate:   "The warranty for the device with serial number %s has expired.",
	notFound:        "Serial number %s was not found in our warranty register. Please check the number on the device label or on your proof of purchase and send it in reply to this message.",
	otherStatus:     "Warranty status for the device with serial number %s: %s.",
	checkFailed:     "We could not check the warranty for serial number %s automatically right now.",
	ticket:          "We opened ticket %s. Please quote this number in any further correspondence.",
	stepFailed:      "We could not complete every step automatically right now (for example, open a service ticket).",
	consultant:      "A consultant will check it and reply to you personally.",
	retryLater:      "Please reply to this message a little later and we will try again.",
	askSerial:       "To check the warranty we need the device's serial number. You will find it on the label on the back or bottom of the device, and on the receipt or invoice. Please send it in reply to this message.",
	outOfScope:      "This mailbox handles warranty and repair matters only, so we cannot help with this request here. If your question is about a warranty or a repair, please reply to this message with the serial number.",
	acknowledge:     "We confirm that we have received your message.",
	personReplies:   "A consultant will read it and reply to you personally.",
	paidRepair:      "We can offer a paid repair. If you are interested, please reply to this message and we will prepare a quote.",
	statutory:       "The device is, however, still covered by the seller's statutory liability for goods that do not conform to the contract. Under it we will repair or replace the device free of charge. Please reply to this message and we will tell you the next steps.",
	proofOfPurchase: "To establish whether the device is covered by the seller's statutory liability, please send us the proof of purchase (receipt or invoice) showing the purchase and delivery date in reply to this message.",
	found:           "Here is what we found in our documentation:",
	attachments:     "(The offline stand-in model does not look at attachments: the %d attached photo(s) or document(s) were not read. A person will look at them if needed.)",
	automatic:       "(This reply was prepared automatically by the triage offline model, a stand-in without AI.)",
}

// composeBody writes the plain-text reply from the facts, the results of
// the calls so far and what the scenario sc (nil: none known) declares
// about its reply; nothing of the customer's text is copied into it. It
// knows result fields, not function or scenario names: a serial_number with a status is a warranty check, a
// ticket_id a ticket, a text a looked-up answer, notified a staff notice;
// a dry run's stand-in (dry_run: true) is none of these, only its
// placeholders show (a ticket_id; notified: staff would be told). The reply says that a person will follow up
// only when staff were told (a notice succeeded): otherwise nobody would
// know to.
func composeBody(f prompt.Facts, h *history, decls []*genai.FunctionDeclaration, reply *genai.FunctionDeclaration, sc *instructions.Scenario) string {
	p := phrasesFor(f.Language, f.DefaultLanguage)
	takesSerial := false
	for _, d := range decls {
		if d != reply && takes(d, "serial_number") {
			takesSerial = true
		}
	}

	var lines, tickets, found []string
	failed, expired, others, told := false, false, 0, false
	statutory, proof := false, false // the decision's basis for an expired guarantee
	for _, c := range h.results {
		if reply != nil && c.name == reply.Name {
			continue
		}
		if c.ok && c.result["notified"] != nil {
			told = true // staff know: not something to report
			continue
		}
		others++
		sn := c.str("serial_number")
		switch {
		case !c.ok && isLookup(c):
			failed = true
			lines = append(lines, fmt.Sprintf(p.checkFailed, sn))
		case !c.ok:
			failed = true
			tickets = append(tickets, p.stepFailed)
		case c.dryRun():
			// A dry run's stand-in: no fact, but the ticket the real call
			// would have opened, under a placeholder number.
			if id, _ := c.result["ticket_id"].(string); id != "" {
				tickets = append(tickets, fmt.Sprintf(p.ticket, id))
			}
		case c.result["ticket_id"] != nil:
			if id := c.str("ticket_id"); id != "" {
				tickets = append(tickets, fmt.Sprintf(p.ticket, id))
			}
		case c.str("status") != "" && sn != "":
			date := c.str("expiration_date")
			switch st := c.str("status"); st {
			case "valid":
				lines = append(lines, withDate(p.valid, p.validNoDate, sn, date))
			case "expired":
				// The decision (triage's, from the registry and the
				// policy) says what is owed; without one, a paid repair.
				switch c.basis() {
				case "statutory":
					statutory = true
				case "needs_proof", "needs_info":
					proof = true
				default:
					expired = true
				}
				lines = append(lines, withDate(p.expired, p.expiredNoDate, sn, date))
			case "not_found":
				lines = append(lines, fmt.Sprintf(p.notFound, sn))
			default:
				lines = append(lines, fmt.Sprintf(p.otherStatus, sn, st))
			}
		default:
			if t := answerText(c.result); t != "" {
				found = append(found, t)
			}
		}
	}

	paras := []string{p.greeting, p.thanks}
	if len(lines) > 0 {
		paras = append(paras, strings.Join(lines, "\n"))
	}
	paras = append(paras, tickets...)
	if len(found) > 0 {
		paras = append(paras, p.found+"\n\n"+strings.Join(found, "\n\n"))
	}
	switch {
	case failed && told:
		paras = append(paras, p.consultant)
	case failed:
		paras = append(paras, p.retryLater)
	}
	asked := len(f.SerialNumbers) == 0 && (takesSerial || sc.Asks(instructions.FactSerialNumber))
	if asked {
		paras = append(paras, p.askSerial)
	}
	declined := sc != nil && sc.DeclinesTopic
	if declined {
		paras = append(paras, p.outOfScope)
	}
	if others == 0 && !asked && !declined {
		ack := p.acknowledge
		if told {
			ack += " " + p.personReplies
		}
		paras = append(paras, ack)
	}
	switch {
	case statutory:
		paras = append(paras, p.statutory)
	case proof:
		paras = append(paras, p.proofOfPurchase)
	case expired:
		paras = append(paras, p.paidRepair)
	}
	if n := len(f.AttachmentsSeen); n > 0 {
		// The stand-in reads no images or PDFs, and says so.
		paras = append(paras, fmt.Sprintf(p.attachments, n))
	}
	paras = append(paras, p.automatic)
	return strings.Join(paras, "\n\n") + "\n"
}

// isLookup reports whether an outcome is a lookup by serial (no other
// arguments than the serial).
func isLookup(o outcome) bool {
	return len(o.args) == 1 && o.args["serial_number"] != nil
}

// maxFound caps a looked-up text quoted in a reply.
const maxFound = 1500

// answerText is the text a tool returned (MCP text content, or a text,
// answer or snippet field), cut to maxFound.
func answerText(res map[string]any) string {
	// A tool saying it found nothing (search_manual's {"found": false},
	// bare or as MCP structured content) gives a note, not an answer to
	// pass on.
	for _, m := range []any{res, res["structured"]} {
		if m, ok := m.(map[string]any); ok && m["found"] == false {
			return ""
		}
	}
	for _, k := range []string{"text", "answer", "snippet", "content"} {
		if s, ok := res[k].(string); ok && strings.TrimSpace(s) != "" {
			s = strings.TrimSpace(s)
			if r := []rune(s); len(r) > maxFound {
				s = string(r[:maxFound]) + " […]"
			}
			return s
		}
	}
	return ""
}

func withDate(withFmt, withoutFmt, serial, date string) string {
	if date == "" {
		return fmt.Sprintf(withoutFmt, serial)
	}
	return fmt.Sprintf(withFmt, serial, date)
}
