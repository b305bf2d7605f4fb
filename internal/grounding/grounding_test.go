package grounding_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage/internal/grounding"
)

func claimStrings(cs []grounding.Claim) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.String())
	}
	return out
}

func TestClaims(t *testing.T) {
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"ważna do 1 maja 2027 r., tj. 01.05.2027", []string{`"1 maja 2027" (date)`, `"01.05.2027" (date)`}},
		{"valid until May 1st, 2027 or 1 May 2027; gültig bis 1. Mai 2027", []string{`"1 May 2027" (date)`, `"1. Mai 2027" (date)`, `"May 1st, 2027" (date)`}},
		{"received 2026-11-24T08:00:00Z", []string{`"2026-11-24T08:00:00Z" (date)`}},
		{"ticket TKT-000123 for SN-48213-PL", []string{`"TKT-000123" (ticket number)`, `"SN-48213-PL" (serial or reference number)`}},
		{"zadzwoń: +48 22 123 45 67 lub 22-123-45-67", []string{`"+48 22 123 45 67" (phone number)`, `"22-123-45-67" (phone number)`}},
		{"koszt 1 200,50 zł, €49.99 albo 49,99 EUR", []string{`"1 200,50 zł" (amount)`, `"49,99 EUR" (amount)`, `"€49.99" (amount)`}},
		{"see https://example.com/a/. or mail serwis@example.pl", []string{`"https://example.com/a/" (url)`, `"serwis@example.pl" (email address)`}},
		{"order #123456", []string{`"#123456" (number)`}},
		// Units, ordinals, short words with digits and small numbers are
		// not claims.
		{"within 24h, the 3rd step, 500 ml, 2 dni roboczych, USB-C, Wi-Fi 6, 90°C, 2FA, mp3, utf-8", nil},
		// Not a calendar day.
		{"31.04.2027", nil},
	} {
		if diff := cmp.Diff(tt.want, claimStrings(grounding.Claims(tt.text))); diff != "" {
			t.Errorf("Claims(%q) (-want +got):\n%s", tt.text, diff)
		}
	}
}

func TestUnsupported(t *testing.T) {
	var src grounding.Sources
	src.AddText("Case facts: {\"from\":\"anna@example.pl\",\"serial_numbers\":[\"SN-48213-PL\"],\"received\":\"2026-11-16T10:00:00+01:00\"}")
	src.AddText("Infolinia serwisu: +48 22 123 45 67, https://www.example.com/serwis")
	src.AddValue(map[string]any{"serial_number": "SN-48213-PL", "status": "valid", "expiration_date": "2027-05-01",
		"ticket": map[string]any{"ticket_id": "TKT-000123"}, "price": 349.5, "items": []any{"FV/2026/11/042"}})
	for _, tt := range []struct {
		reply string
		want  []string
	}{
		{"Ważna do 2027-05-01, 1 maja 2027, May 1, 2027, 1. Mai 2027, 01.05.2027, 05/01/2027.", nil},
		{"Zgłoszenie TKT-000123, faktura FV/2026/11/042, SN-48213-PL, sn48213pl? no: SN48213PL.", nil},
		{"Prosimy dzwonić: 22 123 45 67 albo +48 (22) 123-45-67, www.example.com/serwis/, anna@EXAMPLE.pl.", nil},
		{"Koszt: 349,50 zł (PLN 349.50).", nil},
		{"Wiadomość z 16 listopada 2026.", nil},

		{"Ważna do 2 maja 2027.", []string{`"2 maja 2027" (date)`}},
		{"Gültig bis 1. Mai 2028.", []string{`"1. Mai 2028" (date)`}},
		{"Valid until 13/01/2027.", []string{`"13/01/2027" (date)`}},
		{"Zgłoszenie TKT-000124 i SN-48213.", []string{`"TKT-000124" (ticket number)`, `"SN-48213" (serial or reference number)`}},
		{"Infolinia: +48 22 123 45 68.", []string{`"+48 22 123 45 68" (phone number)`}},
		{"Koszt 350 zł.", []string{`"350 zł" (amount)`}},
		{"Zob. https://www.example.com/serwis/cennik, pisz: biuro@example.pl.", []string{`"https://www.example.com/serwis/cennik" (url)`, `"biuro@example.pl" (email address)`}},
		{"Numer sprawy 7788990.", []string{`"7788990" (number)`}},
		// Each distinct claim once.
		{"TKT-999999 ... TKT-999999", []string{`"TKT-999999" (ticket number)`}},
	} {
		if diff := cmp.Diff(tt.want, claimStrings(src.Unsupported(tt.reply))); diff != "" {
			t.Errorf("Unsupported(%q) (-want +got):\n%s", tt.reply, diff)
		}
	}
}

// TestBounded: a text of any size is read up to MaxText.
func TestBounded(t *testing.T) {
	huge := strings.Repeat("TKT-000001 ", grounding.MaxText/11+1000)
	if n := len(grounding.Claims(huge)); n > grounding.MaxText/11+1 {
		t.Errorf("%d claims from a text cut to %d bytes", n, grounding.MaxText)
	}
}

func BenchmarkUnsupported(b *testing.B) {
	var src grounding.Sources
	for _, c := range corpus {
		src.AddText(c.text)
		for _, r := range c.results {
			src.AddValue(r)
		}
	}
	body := corpus[0].replies[0].body
	b.ReportAllocs()
	for b.Loop() {
		src.Unsupported(body)
	}
}
