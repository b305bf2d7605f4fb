package grounding_test

import (
	"testing"

	embedded "triage/instructions"
	"triage/internal/grounding"
	"triage/internal/instructions"
	"triage/internal/prompt"
)

// reply is a correct reply to one case, as a model following the shipped
// instructions writes it, in one language.
type reply struct{ lang, body string }

// corpusCase is one email of a shipped scenario: what the model was given
// and the correct replies.
type corpusCase struct {
	scenario string
	facts    prompt.Facts
	text     string           // the customer's words
	results  []map[string]any // the function results of this email
	replies  []reply
}

var warrantyValid = map[string]any{"serial_number": "SN-48213-PL", "status": "valid", "expiration_date": "2027-05-01", "product": "Ekspres do kawy CM-500"}

// corpus: every shipped scenario, replies in Polish, English and German,
// dates written the way each language writes them.
var corpus = []corpusCase{
	{
		scenario: "valid-warranty",
		facts:    prompt.Facts{Scenario: "valid-warranty", From: "anna.kowalska@example.pl", ReplyTo: "anna.kowalska@example.pl", Language: "pl", Subject: "Reklamacja ekspresu", SerialNumbers: []string{"SN-48213-PL"}, Received: "2026-11-16T10:00:00+01:00"},
		text:     "Dzień dobry, mój ekspres CM-500 (nr seryjny SN-48213-PL) od 12 listopada nie grzeje wody. Kupiłam go 01.05.2025. Proszę o naprawę.",
		results:  []map[string]any{warrantyValid, {"ticket_id": "TKT-000123", "status": "open"}},
		replies: []reply{
			{"pl", "Dzień dobry,\n\ndziękujemy za wiadomość i przepraszamy za kłopot z ekspresem.\n\nSprawdziliśmy gwarancję urządzenia Ekspres do kawy CM-500 o numerze seryjnym SN-48213-PL: jest ważna do 1 maja 2027 r. (2027-05-01, 1 V 2027), czyli do maja 2027 włącznie.\n\nUtworzyliśmy zgłoszenie serwisowe TKT-000123. Prosimy podawać ten numer w dalszej korespondencji. Nasz serwis skontaktuje się z Panią z instrukcją wysyłki urządzenia.\n"},
			{"en", "Hello,\n\nthank you for your message, and we are sorry your coffee machine stopped heating water.\n\nThe warranty for your Ekspres do kawy CM-500 (serial number SN-48213-PL) is valid until May 1, 2027 (01/05/27), that is until May 2027. We have opened repair ticket TKT-000123 - please quote it in any further correspondence. Our service team will contact you at anna.kowalska@example.pl with instructions for sending the device.\n"},
			{"de", "Guten Tag,\n\nvielen Dank für Ihre Nachricht. Es tut uns leid, dass Ihre Kaffeemaschine kein Wasser mehr erhitzt.\n\nDie Garantie für Ihr Gerät CM-500 mit der Seriennummer SN-48213-PL ist bis zum 1. Mai 2027 (01.05.2027, kurz 01.05.27) gültig. Wir haben das Reparaturticket TKT-000123 eröffnet; bitte geben Sie diese Nummer bei weiterer Korrespondenz an. Unser Serviceteam meldet sich mit Anweisungen zum Versand des Geräts.\n"},
		},
	},
	{
		scenario: "invalid-warranty",
		facts:    prompt.Facts{Scenario: "invalid-warranty", From: "jan@example.com", ReplyTo: "jan@example.com", Language: "en", Subject: "Paid repair of my toaster", SerialNumbers: []string{"SN98765"}},
		text:     "Hi, my toaster SN98765 is out of warranty I think. How much would a repair cost?",
		results:  []map[string]any{{"serial_number": "SN98765", "status": "expired", "expiration_date": "2024-06-15", "product": "Toster T-2"}},
		replies: []reply{
			{"pl", "Dzień dobry,\n\ndziękujemy za wiadomość. Gwarancja na urządzenie Toster T-2 o numerze seryjnym SN98765 wygasła 15 czerwca 2024 r.\n\nMożemy zaproponować płatną naprawę pogwarancyjną: konsultant zdiagnozuje urządzenie i prześle kosztorys, a naprawa rozpocznie się dopiero po jego akceptacji. Aby otrzymać wycenę, wystarczy odpowiedzieć na tę wiadomość.\n"},
			{"en", "Hello,\n\nthank you for your message. According to our register, the warranty for your Toster T-2 (serial number SN98765) expired on 15 June 2024 (2024-06-15).\n\nWe can offer a paid repair: a consultant will diagnose the device and send you a cost estimate, and the repair starts only after you accept it. Just reply to this email to ask for the estimate.\n"},
			{"de", "Guten Tag,\n\nvielen Dank für Ihre Nachricht. Die Garantie für Ihr Gerät Toster T-2 (Seriennummer SN98765) ist am 15.06.2024 abgelaufen.\n\nWir bieten Ihnen gern eine kostenpflichtige Reparatur an: Ein Berater prüft das Gerät und sendet Ihnen einen Kostenvoranschlag; die Reparatur beginnt erst nach Ihrer Zustimmung. Antworten Sie einfach auf diese E-Mail.\n"},
		},
	},
	{
		scenario: "missing-info",
		facts:    prompt.Facts{Scenario: "missing-info", From: "ewa@example.pl", ReplyTo: "ewa@example.pl", Language: "pl", Subject: "Zepsuty odkurzacz"},
		text:     "Mój odkurzacz przestał działać po 3 miesiącach. Co robić?",
		replies: []reply{
			{"pl", "Dzień dobry,\n\ndziękujemy za wiadomość. Rozumiemy, że odkurzacz przestał działać po 3 miesiącach użytkowania.\n\nAby sprawdzić gwarancję, potrzebujemy numeru seryjnego urządzenia. Znajdą go Państwo na etykiecie na spodzie lub z tyłu urządzenia, na pudełku oraz na dowodzie zakupu.\n\nProsimy też o:\n- model urządzenia,\n- datę zakupu (i dowód zakupu, jeśli to możliwe).\n\nPo otrzymaniu numeru seryjnego sprawdzimy gwarancję i przekażemy dalsze kroki.\n"},
			{"en", "Hello,\n\nthank you for your message. We understand your vacuum cleaner stopped working after 3 months.\n\nTo check the warranty we need the serial number. You will find it on the label on the bottom or back of the device, on the box and on your proof of purchase. Please also send the model and the date of purchase. Once we have the serial number, we will check the warranty and let you know how to proceed.\n"},
			{"de", "Guten Tag,\n\nvielen Dank für Ihre Nachricht. Ihr Staubsauger funktioniert nach 3 Monaten nicht mehr.\n\nUm die Garantie zu prüfen, benötigen wir die Seriennummer. Sie finden sie auf dem Etikett an der Unter- oder Rückseite des Geräts, auf der Verpackung und auf dem Kaufbeleg. Bitte nennen Sie uns außerdem das Modell und das Kaufdatum.\n"},
		},
	},
	{
		scenario: "out-of-scope",
		facts:    prompt.Facts{Scenario: "out-of-scope", From: "piotr@example.pl", ReplyTo: "piotr@example.pl", Language: "pl", Subject: "Oferta współpracy"},
		text:     "Dzień dobry, czy są Państwo zainteresowani reklamą w naszym portalu? Cena od 999 zł miesięcznie.",
		replies: []reply{
			{"pl", "Dzień dobry,\n\ndziękujemy za wiadomość. Ta skrzynka obsługuje wyłącznie sprawy gwarancyjne i naprawy, dlatego nie możemy tu pomóc w tej sprawie. Jeśli mają Państwo sprawę gwarancyjną, prosimy odpowiedzieć, podając numer seryjny produktu i opis problemu.\n"},
			{"en", "Hello,\n\nthank you for your message. This mailbox handles warranty claims and repairs only, so we cannot help with this topic here. If you have a warranty or repair matter, please reply with the product's serial number and a description of the problem.\n"},
			{"de", "Guten Tag,\n\nvielen Dank für Ihre Nachricht. Dieses Postfach bearbeitet ausschließlich Garantiefälle und Reparaturen. Falls Sie ein Garantieanliegen haben, antworten Sie bitte mit der Seriennummer und einer Beschreibung des Problems.\n"},
		},
	},
	{
		scenario: "product-question",
		facts:    prompt.Facts{Scenario: "product-question", From: "mark@example.com", ReplyTo: "mark@example.com", Language: "en", Subject: "How do I descale the CM-500?"},
		text:     "Hello, how do I descale my CM-500 coffee machine?",
		results: []map[string]any{{"text": "CM-500 Coffee Machine - Descaling\n\n1. Fill the tank with 500 ml of water and 50 ml of descaler.\n2. Hold the steam button for 5 seconds until the light blinks.\n3. Rinse twice with 1 l of clean water.",
			"structured": map[string]any{"found": true, "manual": "CM-500 Coffee Machine", "section": "Descaling"}}},
		replies: []reply{
			{"pl", "Dzień dobry,\n\nwedług instrukcji CM-500 Coffee Machine, rozdział \"Descaling\" (odkamienianie):\n\n1. Napełnij zbiornik 500 ml wody i 50 ml odkamieniacza.\n2. Przytrzymaj przycisk pary przez 5 sekund, aż lampka zacznie migać.\n3. Przepłucz urządzenie dwukrotnie 1 l czystej wody.\n\nJeśli to nie pomoże, prosimy odpowiedzieć na tę wiadomość; w razie usterki objętej gwarancją prosimy podać numer seryjny.\n"},
			{"en", "Hello,\n\nhere are the steps from the CM-500 Coffee Machine manual, section Descaling:\n\n1. Fill the tank with 500 ml of water and 50 ml of descaler.\n2. Hold the steam button for 5 seconds until the light blinks.\n3. Rinse twice with 1 l of clean water.\n\nIf this does not solve the problem, just reply; for a fault covered by the warranty, please include the serial number.\n"},
			{"de", "Guten Tag,\n\nlaut Handbuch CM-500 Coffee Machine, Abschnitt Descaling (Entkalken):\n\n1. Füllen Sie den Tank mit 500 ml Wasser und 50 ml Entkalker.\n2. Halten Sie die Dampftaste 5 Sekunden gedrückt, bis die Lampe blinkt.\n3. Spülen Sie zweimal mit 1 l klarem Wasser.\n\nFalls das nicht hilft, antworten Sie einfach auf diese E-Mail.\n"},
		},
	},
	{
		scenario: "escalation",
		facts:    prompt.Facts{Scenario: "escalation", From: "zofia@example.pl", ReplyTo: "zofia@example.pl", Language: "pl", Subject: "Trzecia reklamacja!", SerialNumbers: []string{"SN-48213-PL"}, Ticket: &prompt.Ticket{ID: "TKT-000042", Status: "open", Messages: 3}},
		text:     "Piszę już trzeci raz w sprawie SN-48213-PL. Skieruję sprawę do rzecznika konsumentów!",
		results:  []map[string]any{{"notified": []any{"kierownik@example.com"}, "status": "sent"}},
		replies: []reply{
			{"pl", "Dzień dobry,\n\ndziękujemy za wiadomość i bardzo przepraszamy za kłopot. Przekazaliśmy sprawę zgłoszenia TKT-000042 (urządzenie SN-48213-PL) naszemu pracownikowi, który skontaktuje się z Panią osobiście.\n"},
			{"en", "Hello,\n\nthank you for your message, and we are sorry for the trouble. We have passed ticket TKT-000042 (serial number SN-48213-PL) to a member of our staff, who will contact you personally.\n"},
			{"de", "Guten Tag,\n\nvielen Dank für Ihre Nachricht, und entschuldigen Sie die Unannehmlichkeiten. Wir haben Ihr Anliegen (Ticket TKT-000042, Gerät SN-48213-PL) an einen Mitarbeiter weitergegeben, der sich persönlich bei Ihnen meldet.\n"},
		},
	},
	{
		scenario: "follow-up",
		facts:    prompt.Facts{Scenario: "follow-up", From: "anna.kowalska@example.pl", ReplyTo: "anna.kowalska@example.pl", Language: "pl", Subject: "Re: [TKT-000123] Reklamacja ekspresu", SerialNumbers: []string{"SN-48213-PL"}, Ticket: &prompt.Ticket{ID: "TKT-000123", Status: "open", Opened: "2026-11-16T10:05:00Z", Messages: 2}},
		text:     "Dodam jeszcze, że ekspres wycieka od spodu. Mój numer telefonu to 601 234 567.",
		replies: []reply{
			{"pl", "Dzień dobry,\n\ndziękujemy za dodatkowe informacje. Dodaliśmy je do zgłoszenia TKT-000123 (zgłoszenie nr 123) otwartego 16 listopada 2026 r., czyli w listopadzie 2026. Konsultant prowadzący sprawę może zadzwonić pod numer, który Pani podała: „601 234 567”.\n"},
			{"en", "Hello,\n\nthank you for the update. We have added it to ticket TKT-000123, opened on November 16, 2026. The consultant handling it may call you at the number you gave: \"+48 601 234 567\".\n"},
			{"de", "Guten Tag,\n\nvielen Dank für die Ergänzung. Wir haben sie dem Ticket TKT-000123 (Ticket-Nr. 123) vom 16. November 2026 hinzugefügt. Der zuständige Berater meldet sich bei Ihnen unter der Nummer, die Sie angegeben haben: „601-234-567“.\n"},
		},
	},
	{
		scenario: "graceful-degradation",
		facts:    prompt.Facts{Scenario: "graceful-degradation", From: "ola@example.pl", ReplyTo: "ola@example.pl", Language: "pl", Subject: "Pilne", SerialNumbers: []string{"AB-1234-XY"}},
		text:     "Urządzenie AB-1234-XY - proszę o kontakt, szczegóły w załączniku (faktura FV/2026/11/042 na 1 299,00 zł).",
		replies: []reply{
			{"pl", "Dzień dobry,\n\ndziękujemy za wiadomość, którą otrzymaliśmy. Zanotowaliśmy numer seryjny AB-1234-XY oraz to, co Pani napisała: „faktura FV/2026/11/042 na 1299 zł”. Konsultant zapozna się ze sprawą i odpowie.\n"},
			{"en", "Hello,\n\nthank you, we have received your message and noted serial number AB-1234-XY and what you wrote: \"invoice FV/2026/11/042, PLN 1,299.00\". A consultant will read it and reply.\n"},
			{"de", "Guten Tag,\n\nvielen Dank, Ihre Nachricht ist bei uns eingegangen. Wir haben die Seriennummer AB-1234-XY notiert und, wie Sie schrieben, „Rechnung FV/2026/11/042 über 1.299,00 PLN“. Ein Berater wird sich melden.\n"},
		},
	},
}

// TestShippedScenariosCorrectRepliesAreGrounded: the false-positive rate on
// correct replies to every shipped scenario, in Polish, English and German,
// is zero. The sources are what the pipeline gives the model: the shipped
// instructions, the trusted facts and the function results; the
// customer's words back what a reply quotes as theirs.
func TestShippedScenariosCorrectRepliesAreGrounded(t *testing.T) {
	set, err := instructions.LoadScenarios(embedded.FS, []string{"check_warranty", "create_ticket", "send_email", "notify_staff", "search_manual"})
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]int{}
	checked, refused := 0, 0
	for _, c := range corpus {
		sc := set.Get(c.scenario)
		if sc == nil {
			t.Fatalf("no shipped scenario %q", c.scenario)
		}
		var src grounding.Sources
		src.AddText(prompt.System(set.Main, sc.Body))
		src.AddText(prompt.Trusted(c.facts))
		src.AddCustomerText(prompt.Written(c.facts))
		src.AddCustomerText(c.text)
		src.AddLanguage(c.facts.Language)
		for _, r := range c.results {
			src.AddValue(r)
		}
		for _, r := range c.replies {
			checked++
			covered[c.scenario]++
			if bad := src.Unsupported(r.body); len(bad) > 0 {
				refused++
				t.Errorf("%s (%s): correct reply refused for %v:\n%s", c.scenario, r.lang, bad, r.body)
			}
			if len(grounding.Claims(r.body)) == 0 && c.scenario != "out-of-scope" && c.scenario != "missing-info" {
				t.Errorf("%s (%s): no claim found at all; the corpus checks nothing", c.scenario, r.lang)
			}
		}
	}
	for _, sc := range set.Scenarios {
		if covered[sc.Name] < 3 {
			t.Errorf("shipped scenario %s has %d correct replies in the corpus, want one per language (pl, en, de)", sc.Name, covered[sc.Name])
		}
	}
	t.Logf("correct replies checked: %d, refused: %d", checked, refused)
}

// BenchmarkSources builds what the dispatcher checks one reply against:
// the shipped instructions, the user turn and the function results of the
// valid-warranty case, then checks its Polish reply.
func BenchmarkSources(b *testing.B) {
	set, err := instructions.LoadScenarios(embedded.FS, []string{"check_warranty", "create_ticket", "send_email", "notify_staff", "search_manual"})
	if err != nil {
		b.Fatal(err)
	}
	c := corpus[0]
	system := prompt.System(set.Main, set.Get(c.scenario).Body)
	b.ReportAllocs()
	for b.Loop() {
		var src grounding.Sources
		src.AddText(system)
		src.AddText(prompt.Trusted(c.facts))
		src.AddCustomerText(prompt.Written(c.facts))
		src.AddCustomerText(c.text)
		for _, r := range c.results {
			src.AddValue(r)
		}
		if bad := src.Unsupported(c.replies[0].body); len(bad) > 0 {
			b.Fatalf("refused: %v", bad)
		}
	}
}
