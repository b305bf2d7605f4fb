package warranty

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCSVCheck(t *testing.T) {
	reg, err := LoadCSV(filepath.Join("testdata", "registry.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if reg.Len() != 3 {
		t.Errorf("Len = %d, want 3", reg.Len())
	}
	tests := []struct {
		serial string
		want   Result
	}{
		{"SN-48213-PL", Result{SerialNumber: "SN-48213-PL", Status: StatusValid, ExpirationDate: "2027-03-01", Product: "Ekspres ciśnieniowy EC-200"}},
		{"sn 48213 pl", Result{SerialNumber: "SN-48213-PL", Status: StatusValid, ExpirationDate: "2027-03-01", Product: "Ekspres ciśnieniowy EC-200"}},
		{"SN10001PL", Result{SerialNumber: "SN-10001-PL", Status: StatusExpired, ExpirationDate: "2024-01-15", Product: "Czajnik K-1"}},
		{"abc.123/456", Result{SerialNumber: "ABC123456", Status: StatusValid, ExpirationDate: "2026-12-31", Product: "Odkurzacz, model V-9"}},
		{"SN-99999", Result{SerialNumber: "SN-99999", Status: StatusNotFound}},
		{"", Result{SerialNumber: "", Status: StatusNotFound}},
	}
	for _, tt := range tests {
		t.Run(tt.serial, func(t *testing.T) {
			got, err := reg.Check(context.Background(), tt.serial)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Check(%q) (-want +got):\n%s", tt.serial, diff)
			}
		})
	}
}

func TestLoadCSVErrors(t *testing.T) {
	const header = "serial_number,status,expiration_date,product\n"
	tests := []struct {
		name    string
		content string
		want    []string // every substring must occur
	}{
		{"empty file", "", []string{"line 1: header", "empty"}},
		{"wrong header", "serial,status,expiration_date,product\nSN-1,valid,2027-01-01,x\n", []string{"line 1: header"}},
		{"reordered header", "status,serial_number,expiration_date,product\n", []string{"line 1: header"}},
		{"bad status", header + "SN-1,valid,2027-01-01,x\nSN-2,active,2027-01-01,x\n", []string{"line 3: status", `"active"`}},
		{"bad date", header + "SN-1,valid,01.02.2027,x\n", []string{"line 2: expiration_date", "YYYY-MM-DD"}},
		{"impossible date", header + "SN-1,valid,2027-02-30,x\n", []string{"line 2: expiration_date"}},
		{"duplicate serial", header + "SN-1,valid,2027-01-01,x\nsn 1,expired,2020-01-01,y\n", []string{"line 3: serial_number", "duplicates line 2"}},
		{"empty serial", header + " ,valid,2027-01-01,x\n", []string{"line 2: serial_number", "empty"}},
		{"wrong field count", header + "SN-1,valid,2027-01-01\n", []string{"line 2", "want 4 fields"}},
		{"bad quoting", header + "SN-1,valid,2027-01-01,\"x\n", []string{"line 2", "column"}},
		{"unknown optional column", "serial_number,status,expiration_date,product,country\n", []string{"line 1: header", `column "country"`}},
		{"optional column twice", "serial_number,status,expiration_date,product,buyer,buyer\n", []string{"line 1: header", `column "buyer"`}},
		{"bad purchase_date", header[:len(header)-1] + ",purchase_date,buyer\nSN-1,valid,2027-01-01,x,2025/06/01,consumer\n", []string{"line 2: purchase_date", `"2025/06/01" is not YYYY-MM-DD`}},
		{"bad buyer", header[:len(header)-1] + ",buyer,purchase_date\nSN-1,valid,2027-01-01,x,private,2025-06-01\n", []string{"line 2: buyer", `"private", want consumer or business`}},
		{"optional field count", header[:len(header)-1] + ",buyer\nSN-1,valid,2027-01-01,x\n", []string{"line 2", "want 5 fields, got 4"}},
		{"all problems reported", header + "SN-1,bad,2027-01-01,x\nSN-2,valid,never,y\n", []string{"line 2: status", "line 3: expiration_date"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "reg.csv")
			if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadCSV(path)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range append([]string{"warranty: " + path + ": "}, tt.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// The optional columns come after the required ones, in any order; an
// empty cell is unknown.
func TestLoadCSVOptionalColumns(t *testing.T) {
	for _, tt := range []struct{ header, rows string }{
		{"purchase_date,buyer", "SN-1,expired,2025-01-31,x,2025-06-01,consumer\nSN-2,valid,2027-01-01,y,,\n"},
		{"buyer,purchase_date", "SN-1,expired,2025-01-31,x,consumer,2025-06-01\nSN-2,valid,2027-01-01,y,,\n"},
	} {
		reg, err := ReadCSV(strings.NewReader("serial_number,status,expiration_date,product,"+tt.header+"\n"+tt.rows), "reg.csv")
		if err != nil {
			t.Fatalf("%s: %v", tt.header, err)
		}
		got1, _ := reg.Check(context.Background(), "SN-1")
		got2, _ := reg.Check(context.Background(), "SN-2")
		want1 := Result{SerialNumber: "SN-1", Status: StatusExpired, ExpirationDate: "2025-01-31", Product: "x", PurchaseDate: "2025-06-01", Buyer: BuyerConsumer}
		want2 := Result{SerialNumber: "SN-2", Status: StatusValid, ExpirationDate: "2027-01-01", Product: "y"}
		if diff := cmp.Diff([]Result{want1, want2}, []Result{got1, got2}); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.header, diff)
		}
	}
}

func TestLoadCSVMissingFile(t *testing.T) {
	_, err := LoadCSV(filepath.Join(t.TempDir(), "nope.csv"))
	if err == nil || !strings.HasPrefix(err.Error(), "warranty: ") || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("err = %v", err)
	}
}

func TestLoadCSVBOMAndCRLF(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reg.csv")
	content := "\ufeffserial_number,status,expiration_date,product\r\nSN-1,valid,2027-01-01,x\r\n"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	reg, err := LoadCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := reg.Check(context.Background(), "SN-1")
	if diff := cmp.Diff(Result{SerialNumber: "SN-1", Status: StatusValid, ExpirationDate: "2027-01-01", Product: "x"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
