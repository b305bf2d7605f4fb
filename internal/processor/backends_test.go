package processor_test

import (
	"os"
	"path/filepath"
	"testing"

	embedded "triage/instructions"
	"triage/internal/clients/tickets"
	"triage/internal/clients/warranty"
	"triage/internal/instructions"
	"triage/internal/replies"
	"triage/internal/serial"
)

// testScenarios are the built-in scenarios with the shipped tools' routes.
func testScenarios(t testing.TB) *instructions.Scenarios {
	t.Helper()
	set, err := instructions.LoadScenarios(embedded.FS, []string{"check_warranty", "create_ticket", "send_email", "notify_staff", "search_manual"})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// newBackends are a test pipeline's backends in dir: the warranty CSV of
// rows (below its header) in warranty.csv, the ticket database tickets.db
// (closed when t ends), the outbox and the serial number extractor.
func newBackends(t testing.TB, dir, rows string) (*warranty.CSV, *tickets.SQLite, *replies.Outbox, *serial.Extractor) {
	t.Helper()
	csv := filepath.Join(dir, "warranty.csv")
	if err := os.WriteFile(csv, []byte("serial_number,status,expiration_date,product\n"+rows), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := warranty.LoadCSV(csv)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := tickets.OpenSQLite(filepath.Join(dir, "tickets.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tk.Close() })
	ob, err := replies.NewOutbox(filepath.Join(dir, "outbox"))
	if err != nil {
		t.Fatal(err)
	}
	ext, err := serial.New()
	if err != nil {
		t.Fatal(err)
	}
	return w, tk, ob, ext
}
