package serial

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"triage/internal/message"
)

func mustNew(t testing.TB, patterns ...string) *Extractor {
	t.Helper()
	e, err := New(patterns...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestExtract(t *testing.T) {
	e := mustNew(t)
	tests := []struct {
		name, text, quoted string
		want               []string
	}{
		{"bare SN", "my kettle SN12345 leaks", "", []string{"SN12345"}},
		{"SN with dashes", "ekspres SN-48213-PL nie grzeje.", "", []string{"SN-48213-PL"}},
		{"SN lower case", "numer: sn-48213-pl", "", []string{"SN-48213-PL"}},
		{"SN with space", "SN 77123 is broken", "", []string{"SN 77123"}},
		{"S/N label", "S/N: ABC123456.", "", []string{"ABC123456"}},
		{"s/n no colon", "device s/n XK-99812", "", []string{"XK-99812"}},
		{"numer seryjny", "Numer seryjny: QX-2024-771, dziękuję", "", []string{"QX-2024-771"}},
		{"numer seryjny to", "numer seryjny to ZW88123", "", []string{"ZW88123"}},
		{"numeru seryjnego", "podaję numeru seryjnego brak, ale jest A1B2C3D4", "", nil},
		{"numerze seryjnym", "odkurzacz o numerze seryjnym *VX12345*", "", []string{"VX12345"}},
		{"nr seryjny", "nr seryjny 445566AB", "", []string{"445566AB"}},
		{"nr. seryjny", "Nr. seryjny: PL-00123", "", []string{"PL-00123"}},
		{"nr ser.", "nr ser. KR-20931", "", []string{"KR-20931"}},
		{"serial number is", "The serial number is XJ-90210-B.", "", []string{"XJ-90210-B"}},
		{"serial no.", "Serial no. 7781-22-A", "", []string{"7781-22-A"}},
		{"serial #", "serial #Q12W34", "", []string{"Q12W34"}},
		{"label and SN prefix agree", "S/N: SN-48213-PL (SN-48213-PL)", "", []string{"SN-48213-PL"}},
		{"dedup by normalize", "SN-12345 and later SN12345 again", "", []string{"SN-12345"}},
		{"order of appearance", "first SN22222 then S/N: AB33333", "", []string{"SN22222", "AB33333"}},
		{"quoted ranks last", "mine is SN11111", "> old one SN99999\n> also SN11111", []string{"SN11111", "SN99999"}},
		{"only quoted", "thanks", "> your serial SN-70000-PL", []string{"SN-70000-PL"}},
		{"no serial polish", "mój ekspres nie działa, proszę o pomoc", "", nil},
		{"too short", "SN12 and S/N: A12", "", nil},
		{"no digit", "serial number: ABCDEFG, S/N: XYZXYZ", "", nil},
		{"date not serial", "serial number 2024-05-12", "", nil},
		{"dates and phones", "Kupiłem 12.05.2024, tel. 600 123 456, +48 600-123-456", "", nil},
		{"order numbers", "zamówienie nr 2025/001234, order no. 556677, faktura FV/123/2025", "", nil},
		{"words starting with sn", "snowboard snake SNAP2024 snippet", "", nil},
		{"inside word", "ASN12345 and XSN-55555", "", nil},
		{"serial word alone", "serial killer on TV, serial port COM1", "", nil},
		{"words between label and colon", "Numer seryjny mojego ekspresu: XY12345.", "", []string{"XY12345"}},
		{"words between label and to", "numer seryjny urządzenia to 12345ABC", "", []string{"12345ABC"}},
		{"english words between", "The serial number of my kettle is KT-55821.", "", []string{"KT-55821"}},
		{"label then negation", "numer seryjny nie jest widoczny, zamówienie 123456", "", nil},
		{"SN colon", "SN: 4821377", "", []string{"4821377"}},
		{"numer fabryczny", "nr fabryczny 00-7731-A", "", []string{"00-7731-A"}},
		{"label across line break", "Numer seryjny:\nSN-48213-PL", "", []string{"SN-48213-PL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := e.Extract(tt.text, tt.quoted)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Extract(%q, %q) (-want +got):\n%s", tt.text, tt.quoted, diff)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	tests := map[string]string{
		"SN-48213-PL": "SN48213PL",
		"sn 12345":    "SN12345",
		"s/n.a-b/c":   "SNABC",
		"ABC123456":   "ABC123456",
		"":            "",
	}
	for in, want := range tests {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name     string
		patterns []string
		wantErr  string
	}{
		{"defaults", nil, ""},
		{"custom", []string{`\b(PRD-\d{4,})\b`}, ""},
		{"invalid", []string{`(unclosed`}, `serial: pattern "(unclosed"`},
		{"no group", []string{`SN\d+`}, "exactly one capturing group"},
		{"two groups", []string{`(SN)(\d+)`}, "exactly one capturing group"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.patterns...)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("New: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("New error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
	e := mustNew(t, `\b(PRD-\d{4,})\b`)
	if diff := cmp.Diff([]string{"PRD-20250"}, e.Extract("model PRD-20250, SN12345", "")); diff != "" {
		t.Errorf("custom pattern (-want +got):\n%s", diff)
	}
}

// TestExtractFromMessages runs the parser and the extractor together over
// fixtures in several charsets and layouts.
func TestExtractFromMessages(t *testing.T) {
	e := mustNew(t)
	tests := []struct {
		file string
		want []string
	}{
		{"pl-iso88592-qp.eml", []string{"SN-48213-PL"}},
		{"en-html-win1250.eml", []string{"SN12345"}},
		{"quoted-only.eml", []string{"SN-30117-PL"}},
		{"new-and-quoted.eml", []string{"SN24680", "SN-11111-PL"}},
		{"no-serial.eml", nil},
		{"false-positives.eml", nil},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.file] = true
		t.Run(tt.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			m, err := message.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			got := e.Extract(m.Text, m.Quoted)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("serials (-want +got):\n%s\ntext:\n%s\nquoted:\n%s", diff, m.Text, m.Quoted)
			}
		})
	}
	files, _ := filepath.Glob("testdata/*.eml")
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			t.Errorf("fixture %s has no test case", f)
		}
	}
}

func FuzzExtract(f *testing.F) {
	f.Add("SN-48213-PL", "> S/N: ABC123456")
	f.Add("numer seryjny: 12.05.2024", "nr ser. KR-20931")
	f.Add("serial number is is is : - XJ-1", "")
	e := mustNew(f)
	f.Fuzz(func(t *testing.T, text, quoted string) {
		got := e.Extract(text, quoted)
		seen := map[string]bool{}
		for _, s := range got {
			n := Normalize(s)
			if seen[n] {
				t.Errorf("duplicate serial %q in %q", s, got)
			}
			seen[n] = true
			if len(n) < 5 || !strings.ContainsAny(n, "0123456789") {
				t.Errorf("implausible serial %q", s)
			}
			if s != strings.ToUpper(s) {
				t.Errorf("serial %q not upper-cased", s)
			}
		}
	})
}

func BenchmarkExtract(b *testing.B) {
	e := mustNew(b)
	text := strings.Repeat("Dzień dobry, mój ekspres nie działa od wczoraj, zamówienie nr 2025/001234. ", 20) +
		"Numer seryjny: SN-48213-PL."
	quoted := strings.Repeat("> Prosimy o podanie numeru seryjnego urządzenia.\n", 20)
	b.ReportAllocs()
	for b.Loop() {
		e.Extract(text, quoted)
	}
}
