package grounding

import (
	"strings"
	"testing"
)

// TestDateOfAnotherSerial: a customer with two devices; check_warranty
// answered for each. A date or amount a result states is backed for the
// serial that result names: written next to the other serial, it is a true
// date attached to the wrong device, and is flagged.
func TestDateOfAnotherSerial(t *testing.T) {
	sources := func(more ...string) *Sources {
		var s Sources
		s.AddText(`Case facts: {"serial_numbers":["SN-51001-PL","SN-51002-PL"],"received":"2026-11-16T08:12:44Z"}`)
		for _, m := range more {
			s.AddText(m)
		}
		s.AddValue(map[string]any{"serial_number": "SN-51001-PL", "status": "valid", "expiration_date": "2027-09-30", "product": "Czajnik"})
		s.AddValue(map[string]any{"serial_number": "SN-51002-PL", "status": "expired", "expiration_date": "2026-03-31", "product": "Zmywarka",
			"decision": map[string]any{"basis": "statutory", "answer_by": "2026-11-30"}, "repair_price": 349.5})
		s.AddValue(map[string]any{"ticket_id": "TKT-000001", "status": "created"})
		return &s
	}
	for _, tt := range []struct {
		name, reply string
		more        []string
		want        []string // the flagged claims' texts
	}{
		{name: "each date with its own serial",
			reply: "Gwarancja urządzenia SN-51001-PL jest ważna do 2027-09-30, a gwarancja SN-51002-PL wygasła 2026-03-31."},
		{name: "serial A with the date of serial B",
			reply: "Gwarancja urządzenia SN-51001-PL wygasła 2026-03-31.", want: []string{"2026-03-31"}},
		{name: "serial B with the date of serial A, written another way",
			reply: "Dla zmywarki SN-51002-PL gwarancja obowiązuje do 30.09.2027 r.", want: []string{"30.09.2027"}},
		{name: "the date before the serial it is about",
			reply: "Do 30 września 2027 obowiązuje gwarancja SN-51002-PL.", want: []string{"30 września 2027"}},
		{name: "an amount of the other result",
			reply: "Naprawa czajnika SN-51001-PL kosztuje 349,50 zł.", want: []string{"349,50 zł"}},
		{name: "the amount with its own serial",
			reply: "Naprawa zmywarki SN-51002-PL kosztuje 349,50 zł."},
		{name: "another sentence: nothing attaches the date to the serial",
			reply: "Sprawdziliśmy SN-51001-PL. Termin odpowiedzi na reklamację to 2026-11-30."},
		{name: "the serial after the date, in its clause",
			reply: "Data 2026-03-31 dotyczy urządzenia SN-51001-PL.", want: []string{"2026-03-31"}},
		{name: "the date before the serial of its own clause",
			reply: "Gwarancja wygasła 2026-03-31 dla SN-51002-PL, a 2027-09-30 to koniec gwarancji SN-51001-PL."},
		{name: "the date of another clause than the serial's",
			reply: "Sprawdziliśmy SN-51001-PL, termin odpowiedzi to 2026-11-30."},
		{name: "the nearest serial before the date counts",
			reply: "Urządzenia SN-51001-PL i SN-51002-PL: gwarancja drugiego wygasła 2026-03-31."},
		{name: "a date a source about no serial states is free",
			reply: "Gwarancja urządzenia SN-51001-PL wygasła 2026-03-31.", more: []string{"Przerwa świąteczna trwa do 2026-03-31."}},
		{name: "the decision's date is bound to its serial",
			reply: "Na reklamację urządzenia SN-51001-PL odpowiemy do 2026-11-30.", want: []string{"2026-11-30"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, c := range sources(tt.more...).Unsupported(tt.reply) {
				got = append(got, c.Text)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("Unsupported(%q) = %q, want %q", tt.reply, got, tt.want)
			}
			if len(tt.want) > 0 {
				if c := sources(tt.more...).Unsupported(tt.reply)[0]; !strings.Contains(c.String(), ", written for SN-5100") {
					t.Errorf("the claim does not name the serial it is written for: %s", c)
				}
			}
		})
	}
}

// TestOneResultBindsNothingElse: with one device, its date goes with its
// serial; a result added twice, or a text first read in a result and then
// as a free source, changes nothing.
func TestOneResultBindsNothingElse(t *testing.T) {
	var s Sources
	res := map[string]any{"serial_number": "SN-48213-PL", "status": "valid", "warranty_until": "2099-05-31"}
	s.AddValue(res)
	s.AddValue(res)
	if bad := s.Unsupported("Gwarancja SN-48213-PL jest ważna do 2099-05-31."); len(bad) != 0 {
		t.Errorf("unsupported: %v", bad)
	}
	var f Sources
	f.AddValue(map[string]any{"serial_number": "SN-1", "until": "2099-05-31"})
	f.AddValue(map[string]any{"serial_number": "SN-2222-PL", "until": "2098-01-01"})
	if bad := f.Unsupported("Gwarancja SN-2222-PL jest ważna do 2099-05-31."); len(bad) != 1 {
		t.Errorf("before the date is free: unsupported %v, want the date", bad)
	}
	f.AddText("2099-05-31") // the same text, now outside any result
	if bad := f.Unsupported("Gwarancja SN-2222-PL jest ważna do 2099-05-31."); len(bad) != 0 {
		t.Errorf("a free source states the date: unsupported %v", bad)
	}
}
