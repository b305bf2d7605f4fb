package processor_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"triage"

	"triage/internal/agent"
	"triage/internal/dispatcher"
	"triage/internal/processor"
	"triage/internal/prompt"
)

// liar is a model that does the work right (checks the warranty, opens the
// ticket) and then writes the reply bodies it was given, one per send_email
// attempt, whatever the dispatcher answers: a model that states facts
// nothing backs.
type liar struct{ bodies []string }

func (l *liar) GenerateContent(ctx context.Context, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	f, err := prompt.ParseFacts(contents[0].Parts[0].Text)
	if err != nil {
		return nil, err
	}
	done, sends := map[string]bool{}, 0
	for _, c := range contents {
		for _, p := range c.Parts {
			if r := p.FunctionResponse; r != nil {
				done[r.Name] = true
				if r.Name == "send_email" {
					sends++
				}
			}
		}
	}
	call := func(name string, args map[string]any) *genai.GenerateContentResponse {
		return resp(&genai.Part{FunctionCall: &genai.FunctionCall{ID: "c-" + name, Name: name, Args: args}})
	}
	switch {
	case !done["check_warranty"]:
		return call("check_warranty", map[string]any{"serial_number": f.SerialNumbers[0]}), nil
	case !done["create_ticket"]:
		return call("create_ticket", map[string]any{"serial_number": f.SerialNumbers[0], "customer_email": f.From, "priority": "normal"}), nil
	case sends < len(l.bodies):
		return call("send_email", map[string]any{"to": f.ReplyTo, "subject": "Re: " + f.Subject, "body": l.bodies[sends]}), nil
	default:
		return resp(&genai.Part{Text: "I could not send the reply."}), nil
	}
}

// TestGroundedReplies: with the shipped tools.yaml (send_email grounded), a
// reply stating a fact that neither the facts, the instructions nor a
// function result backs is refused with ungrounded_claim naming the claim
// (the customer's own words back only what the reply quotes as theirs);
// the model may correct it once, then the email is left for a person.
// The registry says SN-48213-PL is valid until 2027-05-31; the ticket the
// pipeline opens is TKT-000001.
func TestGroundedReplies(t *testing.T) {
	const (
		email = "Dzień dobry, mój ekspres SN-48213-PL nie działa od 12.11.2026. Proszę o naprawę gwarancyjną."
		good  = "Dzień dobry,\n\ngwarancja urządzenia SN-48213-PL jest ważna do 31 maja 2027. Otworzyliśmy zgłoszenie TKT-000001."
	)
	type want struct {
		summary
		claims []string // claims named in the refusals, in order
	}
	refusedTwice := summary{Status: triage.StatusFailed, Reason: triage.ReasonUngroundedClaim,
		Scenario: "valid-warranty", Method: "rules", Serials: []string{"SN-48213-PL"},
		Calls: []string{"check_warranty ok", "create_ticket ok", "send_email blocked:ungrounded_claim", "send_email blocked:ungrounded_claim"}}
	for _, tt := range []struct {
		name   string
		bodies []string
		want   want
	}{
		{"wrong expiry date", []string{
			"Gwarancja SN-48213-PL jest ważna do 2028-05-31.",
			"Gwarancja SN-48213-PL jest ważna do 31.05.2028.",
		}, want{refusedTwice, []string{`"2028-05-31" (date)`, `"31.05.2028" (date)`}}},
		{"invented ticket number", []string{
			"Otworzyliśmy zgłoszenie TKT-004711.",
			"Numer zgłoszenia: #471120.",
		}, want{refusedTwice, []string{`"TKT-004711" (ticket number)`, `"#471120" (number)`}}},
		{"made-up phone number", []string{
			"Prosimy o kontakt pod numerem +48 22 555 01 99.",
			"Prosimy dzwonić: 801 555 019.",
		}, want{refusedTwice, []string{`"+48 22 555 01 99" (phone number)`, `"801 555 019" (phone number)`}}},
		{"wrong date in another language's format", []string{
			"Your warranty is valid until May 31, 2028.",
			"Ihre Garantie gilt bis zum 31. Mai 2028.",
		}, want{refusedTwice, []string{`"May 31, 2028" (date)`, `"31. Mai 2028" (date)`}}},
		{"wrong date with a two-digit year, then a Roman-numeral month", []string{
			"Gwarancja SN-48213-PL jest ważna do 31.05.28.",
			"Gwarancja SN-48213-PL jest ważna do 31 V 2028 r.",
		}, want{refusedTwice, []string{`"31.05.28" (date)`, `"31 V 2028" (date)`}}},
		{"a wrong date right after the right one", []string{
			"Gwarancja SN-48213-PL: 31.05.2027 30.06.2027.",
			"Gwarancja SN-48213-PL: 2027-05-31 2028-05-31.",
		}, want{refusedTwice, []string{`"30.06.2027" (date)`, `"2028-05-31" (date)`}}},
		{"wrong month and year", []string{
			"Gwarancja SN-48213-PL obowiązuje do czerwca 2027.",
			"Your warranty runs until May 2028.",
		}, want{refusedTwice, []string{`"czerwca 2027" (date)`, `"May 2028" (date)`}}},
		{"invented ticket number written as digits", []string{
			"Otworzyliśmy zgłoszenie nr 4711.",
			"Ihre Ticket-Nr. 4712 ist eröffnet.",
		}, want{refusedTwice, []string{`"4711" (ticket number)`, `"4712" (ticket number)`}}},
		{"invented tax number", []string{
			"Fakturę wystawi Serwis sp. z o.o., NIP 525-000-00-00.",
			"Fakturę wystawi Serwis sp. z o.o., NIP 5250000000.",
		}, want{refusedTwice, []string{`"525-000-00-00" (tax number)`, `"5250000000" (tax number)`}}},
		{"a wrong date and ticket disguised with look-alike letters", []string{
			"Gwarancja SN-48213-PL jest ważna do 31 m\u0430ja 2028.",          // Cyrillic a
			"Otworzyliśmy zgłoszenie \u03a4\u039a\u03a4-000002, SN-48213-PL.", // Greek T K T
		}, want{refusedTwice, []string{`"31 maja 2028" (date)`, `"TKT-000002" (ticket number)`}}},
		{"an invented day with no year, then a wrong day in a list", []string{
			"Technik przyjedzie 5 grudnia, zgłoszenie TKT-000001.",
			"Gwarancja SN-48213-PL jest ważna do 30 i 31 maja 2027.",
		}, want{refusedTwice, []string{`"5 grudnia" (date)`, `"30 i 31 maja 2027" (date)`}}},
		{"an invented day written in words, in two languages", []string{
			"Gwarancja SN-48213-PL jest ważna do 31 maja 2027. Technik przyjedzie piątego grudnia.",
			"Your warranty is valid until May 31, 2027. A technician will come on the first of June 2027.",
		}, want{refusedTwice, []string{`"piątego grudnia" (date)`, `"first of June 2027" (date)`}}},
		{"invented bank account", []string{
			"Gwarancja SN-48213-PL jest ważna do 31 maja 2027. Za dodatkowy serwis prosimy o wpłatę na konto 61 1090 1014 0000 0712 1981 2874.",
			"Gwarancja SN-48213-PL jest ważna do 31 maja 2027. IBAN do wpłat: PL27 1140 2004 0000 3002 0135 5387.",
		}, want{refusedTwice, []string{`"61 1090 1014 0000 0712 1981 2874" (bank account or card number)`, `"PL27 1140 2004 0000 3002 0135 5387" (bank account or card number)`}}},
		{"an invented repair time, then an invented discount", []string{
			"Gwarancja SN-48213-PL jest ważna do 31 maja 2027. Naprawa potrwa 3 dni robocze.",
			"Gwarancja SN-48213-PL jest ważna do 31 maja 2027. Za kłopot przyznajemy rabat 20% na kolejny zakup.",
		}, want{refusedTwice, []string{`"3 dni robocze" (duration)`, `"20%" (percentage)`}}},
		{"an invented repair time in words, in two languages", []string{
			"Gwarancja SN-48213-PL jest ważna do 31 maja 2027. Naprawa potrwa trzy dni robocze.",
			"Your warranty is valid until May 31, 2027. The repair will take two weeks.",
		}, want{refusedTwice, []string{`"trzy dni robocze" (duration)`, `"two weeks" (duration)`}}},
		{"a vague promise of a repair time, then a pair half in words", []string{
			"Gwarancja SN-48213-PL jest ważna do 31 maja 2027. Odpowiemy w najbliższych dniach, a naprawa potrwa kilka dni.",
			"Your warranty is valid until May 31,2027. The repair will take 2 or three days.",
		}, want{refusedTwice, []string{`"najbliższych dniach" (duration)`, `"kilka dni" (duration)`, `"2 or three days" (duration)`}}},
		{"a wrong year glued to its month", []string{
			"Gwarancja SN-48213-PL jest ważna do 31 maja2028.",
			"Your warranty is valid until May 31,2028.",
		}, want{refusedTwice, []string{`"31 maja2028" (date)`, `"May 31,2028" (date)`}}},
		{"an invented day hidden in a long list, then one after a currency between two amounts", []string{
			"Gwarancja SN-48213-PL jest ważna do 31 maja 2027. Technik przyjedzie 27, 28, 29 i 31 maja.",
			"Gwarancja SN-48213-PL jest ważna do 31 maja 2027. Dopłata za kuriera: $0 EUR 35.",
		}, want{refusedTwice, []string{`"27, 28, 29 i 31 maja" (date)`, `"EUR 35" (amount)`}}},
		{"the customer's own date confirmed, then an invented quotation", []string{
			"Gwarancja SN-48213-PL jest ważna do 31 maja 2027. Usterka od 12.11.2026 jest objęta gwarancją.",
			"Gwarancja SN-48213-PL jest ważna do 31 maja 2027. Napisała Pani, że ekspres „nie działa od 13.11.2026”.",
		}, want{refusedTwice, []string{`"12.11.2026" (date)`, `"13.11.2026" (date)`}}},
		{"invented amount and address", []string{
			"Naprawa kosztuje 349 zł, prosimy o wpłatę i kontakt: naprawy@serwis-example.pl, https://serwis-example.pl/platnosc.",
			good,
		}, want{summary{Status: triage.StatusReplied, Scenario: "valid-warranty", Method: "rules", Serials: []string{"SN-48213-PL"},
			Calls: []string{"check_warranty ok", "create_ticket ok", "send_email blocked:ungrounded_claim", "send_email ok"}},
			[]string{`"naprawy@serwis-example.pl" (email address)`, `"https://serwis-example.pl/platnosc" (url)`, `"349 zł" (amount)`}}},
		{"one correction is allowed", []string{strings.Replace(good, "TKT-000001", "TKT-000002", 1), good},
			want{summary{Status: triage.StatusReplied, Scenario: "valid-warranty", Method: "rules", Serials: []string{"SN-48213-PL"},
				Calls: []string{"check_warranty ok", "create_ticket ok", "send_email blocked:ungrounded_claim", "send_email ok"}},
				[]string{`"TKT-000002" (ticket number)`}}},
		{"a third attempt is refused unchecked", []string{"Zgłoszenie TKT-000009.", "Zgłoszenie TKT-000008.", good},
			want{summary{Status: triage.StatusFailed, Reason: triage.ReasonUngroundedClaim, Scenario: "valid-warranty", Method: "rules", Serials: []string{"SN-48213-PL"},
				Calls: []string{"check_warranty ok", "create_ticket ok", "send_email blocked:ungrounded_claim", "send_email blocked:ungrounded_claim", "send_email blocked:ungrounded_claim"}},
				[]string{`"TKT-000009" (ticket number)`, `"TKT-000008" (ticket number)`}}},
		{"the facts in every written form", []string{"Dzień dobry,\n\ngwarancja SN-48213-PL (zgłoszenie TKT-000001) jest ważna do 31 maja 2027, " +
			"also May 31, 2027, 31. Mai 2027, 31.05.2027 und 2027-05-31, 31 m\u0430ja 2027 (\u0422\u041a\u0422-000001), do 31 maja. " +
			"Napisała Pani, że ekspres „nie działa od 12.11.2026”. Odpowiadamy na adres anna@example.pl."},
			want{summary{Status: triage.StatusReplied, Scenario: "valid-warranty", Method: "rules", Serials: []string{"SN-48213-PL"},
				Calls: []string{"check_warranty ok", "create_ticket ok", "send_email ok"}}, nil}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, &liar{bodies: tt.bodies})
			out := e.proc.Process(context.Background(), processor.Input{Name: "in.eml", Raw: eml("Anna <anna@example.pl>", "Reklamacja", email)})
			got := want{summary: summarize(out)}
			for _, c := range out.FunctionCalls {
				if c.Error != nil && c.Error.Code == dispatcher.CodeUngroundedClaim {
					for _, cl := range tt.want.claims {
						if strings.Contains(c.Error.Message, cl) {
							got.claims = append(got.claims, cl)
						}
					}
				}
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("(-want +got):\n%s\noutcome detail: %s", diff, out.Detail)
			}
		})
	}
}

// TestGroundedCountryCode: a reply may quote the customer's national
// number with the country code of the language the pipeline detected
// (Polish: +48), not with another.
func TestGroundedCountryCode(t *testing.T) {
	const email = "Dzień dobry, mój ekspres SN-48213-PL nie działa. Proszę o telefon, mój numer to 601 234 567."
	e := newEnv(t, &liar{bodies: []string{
		"Gwarancja SN-48213-PL jest ważna do 31 maja 2027. Konsultant zadzwoni pod numer, który Pani podała: „+45 601 234 567”.",
		"Gwarancja SN-48213-PL jest ważna do 31 maja 2027. Konsultant zadzwoni pod numer, który Pani podała: „+48 601 234 567”.",
	}})
	out := e.proc.Process(context.Background(), processor.Input{Name: "in.eml", Raw: eml("Anna <anna@example.pl>", "Reklamacja", email)})
	want := summary{Status: triage.StatusReplied, Scenario: "valid-warranty", Method: "rules", Serials: []string{"SN-48213-PL"},
		Calls: []string{"check_warranty ok", "create_ticket ok", "send_email blocked:ungrounded_claim", "send_email ok"}}
	if diff := cmp.Diff(want, summarize(out)); diff != "" {
		t.Fatalf("(-want +got):\n%s\noutcome detail: %s", diff, out.Detail)
	}
	if out.Language != "pl" {
		t.Errorf("language %q, want pl", out.Language)
	}
	for _, c := range out.FunctionCalls {
		if c.Error != nil && !strings.Contains(c.Error.Message, `"+45 601 234 567" (phone number)`) {
			t.Errorf("refusal does not name the invented country code: %s", c.Error.Message)
		}
	}
}

// TestGroundedDrafts: in draft mode a person sends the reply, yet a draft
// stating a fact nothing backs is refused just the same: never written to
// the drafts folder, corrected once, or left for a person.
func TestGroundedDrafts(t *testing.T) {
	const (
		email = "Dzień dobry, mój ekspres SN-48213-PL nie działa. Proszę o naprawę gwarancyjną."
		good  = "Dzień dobry,\n\ngwarancja urządzenia SN-48213-PL jest ważna do 31 maja 2027. Otworzyliśmy zgłoszenie TKT-000001."
	)
	draft := func(_ *agent.Config, c *processor.Config) { c.ReplyMode = triage.ReplyDraft }
	for _, tt := range []struct {
		name   string
		bodies []string
		want   summary
		drafts int
	}{
		{"an invented expiry date, corrected", []string{"Gwarancja SN-48213-PL jest ważna do 31 maja 2029.", good},
			summary{Status: triage.StatusDrafted, Scenario: "valid-warranty", Method: "rules", Serials: []string{"SN-48213-PL"},
				Calls: []string{"check_warranty ok", "create_ticket ok", "send_email blocked:ungrounded_claim", "send_email ok"}}, 1},
		{"an invented ticket and phone number, twice", []string{"Zgłoszenie TKT-000777.", "Prosimy dzwonić: +48 22 555 01 99."},
			summary{Status: triage.StatusFailed, Reason: triage.ReasonUngroundedClaim, Scenario: "valid-warranty", Method: "rules", Serials: []string{"SN-48213-PL"},
				Calls: []string{"check_warranty ok", "create_ticket ok", "send_email blocked:ungrounded_claim", "send_email blocked:ungrounded_claim"}}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, &liar{bodies: tt.bodies}, draft)
			out := e.proc.Process(context.Background(), processor.Input{Name: "in.eml", Raw: eml("Anna <anna@example.pl>", "Reklamacja", email)})
			if diff := cmp.Diff(tt.want, summarize(out)); diff != "" {
				t.Errorf("(-want +got):\n%s\noutcome detail: %s", diff, out.Detail)
			}
			if n := len(files(t, filepath.Join(e.outbox, "drafts"))); n != tt.drafts {
				t.Errorf("%d draft(s) written, want %d", n, tt.drafts)
			}
		})
	}
}
