package guard

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"triage"
	"triage/internal/serial"
)

// TestSampleInbox keeps examples/inbox honest: each sample parses, the guard
// skips exactly the machine-sent ones, the serials are the ones its README
// promises, and the sample registry knows every serial except SN55555.
func TestSampleInbox(t *testing.T) {
	type outcome struct {
		Reason      triage.Reason
		Serials     []string
		FromHTML    bool
		Attachments int
	}
	want := map[string]outcome{
		"01-valid-warranty-pl.eml":        {Serials: []string{"SN-48213-PL"}},
		"02-valid-warranty-en.eml":        {Serials: []string{"SN12345"}},
		"03-expired-warranty-pl.eml":      {Serials: []string{"SN98765"}},
		"04-unknown-serial-en.eml":        {Serials: []string{"SN55555"}},
		"05-no-serial-pl.eml":             {},
		"06-out-of-office.eml":            {Reason: triage.ReasonAutoSubmitted},
		"07-newsletter.eml":               {Reason: triage.ReasonList},
		"08-html-windows-1250.eml":        {Serials: []string{"SN-70412-PL"}, FromHTML: true},
		"09-pdf-attachment.eml":           {Serials: []string{"SN-61042-PL"}, Attachments: 1},
		"10-serial-in-quoted-history.eml": {Serials: []string{"SN-30117-PL"}},
		"11-job-question.eml":             {},
		"12-prompt-injection.eml":         {Serials: []string{"SN-72231-PL"}},
		"13-product-question-en.eml":      {},
		"14-angry-customer-en.eml":        {},
		"15-statutory-pl.eml":             {Serials: []string{"SN-24031-PL"}},
	}
	ex, err := serial.New()
	if err != nil {
		t.Fatal(err)
	}
	registry := loadRegistry(t, "../../examples/warranty.csv")
	files, err := filepath.Glob("../../examples/inbox/*.eml")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]outcome{}
	ids := map[string]string{}
	for _, f := range files {
		m := parseFile(t, f)
		name := filepath.Base(f)
		if len(m.Problems) > 0 || m.Date.IsZero() || m.MessageID == "" || m.From.Address == "" {
			t.Errorf("%s: problems %q, date %v, id %q, from %q", name, m.Problems, m.Date, m.MessageID, m.From.Address)
		}
		if prev, dup := ids[m.MessageID]; dup {
			t.Errorf("%s and %s share Message-ID %s", prev, name, m.MessageID)
		}
		ids[m.MessageID] = name
		if diff := cmp.Diff([]string{"serwis@example.com"}, m.To); diff != "" {
			t.Errorf("%s: To (-want +got):\n%s", name, diff)
		}
		o := outcome{
			Reason:      Check(Config{OwnAddresses: []string{"serwis@example.com"}}, m).Reason,
			Serials:     ex.Extract(m.Text, m.Quoted),
			FromHTML:    m.FromHTML,
			Attachments: len(m.Attachments),
		}
		got[name] = o
		for _, sn := range o.Serials {
			if _, known := registry[serial.Normalize(sn)]; known == (sn == "SN55555") {
				t.Errorf("%s: serial %s in registry = %v", name, sn, known)
			}
		}
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("sample inbox (-want +got):\n%s", diff)
	}
}

// loadRegistry reads the sample CSV keyed by normalized serial and checks
// its header and statuses.
func loadRegistry(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// The contract's four columns first, then the optional ones.
	if diff := cmp.Diff([]string{"serial_number", "status", "expiration_date", "product"}, rows[0][:min(4, len(rows[0]))]); diff != "" {
		t.Fatalf("header (-want +got):\n%s", diff)
	}
	for _, col := range rows[0][4:] {
		if col != "purchase_date" && col != "buyer" {
			t.Errorf("header: optional column %q, want purchase_date or buyer", col)
		}
	}
	reg := map[string][]string{}
	for _, r := range rows[1:] {
		if r[1] != "valid" && r[1] != "expired" {
			t.Errorf("row %q: status %q", r, r[1])
		}
		k := serial.Normalize(r[0])
		if _, dup := reg[k]; dup {
			t.Errorf("serial %s listed twice", r[0])
		}
		reg[k] = r
	}
	if got := reg[serial.Normalize("SN98765")]; len(got) == 0 || got[1] != "expired" || got[2] != "2024-06-15" {
		t.Errorf("SN98765 row = %q, want expired 2024-06-15", got)
	}
	return reg
}
