// Package warranty answers "is this serial under warranty?" from a local CSV
// registry or a remote HTTP JSON service.
//
// The remote service contract (HTTP):
//
//	GET {BaseURL}/warranty/{serial}          (serial path-escaped)
//	Authorization: Bearer {Token}            (when Token is set)
//	Accept: application/json
//
//	200 {"serial_number":"SN-1","status":"valid|expired|not_found",
//	     "expiration_date":"2027-01-31","product":"...",
//	     "purchase_date":"2025-06-01","buyer":"consumer|business"}
//	    (purchase_date and buyer optional; a value of another form is
//	    taken as unknown)
//	404 the serial is not registered (a not_found Result, not an error)
//	429, 5xx, timeouts, transport failures: temporary errors
//	other statuses, bad JSON, unknown status values: permanent errors
package warranty

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"triage/internal/serial"
)

// Status values.
const (
	StatusValid    = "valid"
	StatusExpired  = "expired"
	StatusNotFound = "not_found"
)

// Buyer values.
const (
	BuyerConsumer = "consumer"
	BuyerBusiness = "business"
)

// Result is the answer for one serial; it is what the model sees.
type Result struct {
	SerialNumber   string `json:"serial_number"`
	Status         string `json:"status"`
	ExpirationDate string `json:"expiration_date,omitempty"` // YYYY-MM-DD
	Product        string `json:"product,omitempty"`
	// PurchaseDate (YYYY-MM-DD) and Buyer (BuyerConsumer, BuyerBusiness)
	// are "" when the registry does not know them.
	PurchaseDate string `json:"purchase_date,omitempty"`
	Buyer        string `json:"buyer,omitempty"`
}

// Checker looks up one serial. A serial that is not registered is a Result
// with StatusNotFound, not an error; errors mean the lookup itself failed.
type Checker interface {
	Check(ctx context.Context, serial string) (Result, error)
}

// CSVHeader is the required header of a registry file.
var CSVHeader = []string{"serial_number", "status", "expiration_date", "product"}

// CSVOptional are the columns a registry file may add after CSVHeader, in
// any order: purchase_date (YYYY-MM-DD) and buyer (consumer or business).
// An empty cell is unknown.
var CSVOptional = []string{"purchase_date", "buyer"}

// CSV is a registry loaded once from a file with the header
// serial_number,status,expiration_date,product and, after it, any of
// CSVOptional. Lookups compare serials
// with serial.Normalize (upper case, no spaces, dashes, dots or slashes).
// It is safe for concurrent use.
type CSV struct {
	byKey map[string]Result
}

var _ Checker = (*CSV)(nil)

// LoadCSV reads and validates the file; errors name the file, line and field
// (e.g. bad status, bad date, duplicate serial, wrong header).
func LoadCSV(path string) (*CSV, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("warranty: %w", err)
	}
	defer f.Close()
	return ReadCSV(f, path)
}

// ReadCSV reads a registry from r; name is used in errors.
func ReadCSV(r io.Reader, name string) (*CSV, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 0 // the header's
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("warranty: %s: line 1: header: file is empty, want %s", name, strings.Join(CSVHeader, ","))
	}
	if err != nil {
		return nil, csvErr(name, err)
	}
	if len(header) > 0 {
		header[0] = strings.TrimPrefix(header[0], "\ufeff")
	}
	for i := range header {
		header[i] = strings.TrimSpace(header[i])
	}
	optional, err := optionalColumns(header)
	if err != nil {
		return nil, fmt.Errorf("warranty: %s: line 1: header: got %q, want %s%s", name, strings.Join(header, ","), strings.Join(CSVHeader, ","), err)
	}
	c := &CSV{byKey: make(map[string]Result)}
	firstLine := make(map[string]int)
	var errs []error
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) && errors.Is(pe.Err, csv.ErrFieldCount) {
				errs = append(errs, fmt.Errorf("warranty: %s: line %d: want %d fields, got %d", name, pe.Line, len(header), len(rec)))
				continue
			}
			return nil, csvErr(name, err)
		}
		line, _ := cr.FieldPos(0)
		res := Result{
			SerialNumber:   strings.TrimSpace(rec[0]),
			Status:         strings.TrimSpace(rec[1]),
			ExpirationDate: strings.TrimSpace(rec[2]),
			Product:        strings.TrimSpace(rec[3]),
		}
		key := serial.Normalize(res.SerialNumber)
		switch {
		case key == "":
			errs = append(errs, fmt.Errorf("warranty: %s: line %d: serial_number: empty", name, line))
			continue
		case res.Status != StatusValid && res.Status != StatusExpired:
			errs = append(errs, fmt.Errorf("warranty: %s: line %d: status: %q, want valid or expired", name, line, res.Status))
			continue
		}
		if _, err := time.Parse(time.DateOnly, res.ExpirationDate); err != nil {
			errs = append(errs, fmt.Errorf("warranty: %s: line %d: expiration_date: %q is not YYYY-MM-DD", name, line, res.ExpirationDate))
			continue
		}
		if err := res.setOptional(optional, rec); err != nil {
			errs = append(errs, fmt.Errorf("warranty: %s: line %d: %w", name, line, err))
			continue
		}
		if first, dup := firstLine[key]; dup {
			errs = append(errs, fmt.Errorf("warranty: %s: line %d: serial_number: %q duplicates line %d", name, line, res.SerialNumber, first))
			continue
		}
		firstLine[key] = line
		c.byKey[key] = res
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

// optionalColumns maps the optional columns of header (after CSVHeader)
// to their index; the error completes "want <CSVHeader>".
func optionalColumns(header []string) (map[string]int, error) {
	if len(header) < len(CSVHeader) || !slices.Equal(header[:len(CSVHeader)], CSVHeader) {
		return nil, fmt.Errorf(" (then optionally %s)", strings.Join(CSVOptional, ", "))
	}
	cols := map[string]int{}
	for i, h := range header[len(CSVHeader):] {
		if _, dup := cols[h]; dup || !slices.Contains(CSVOptional, h) {
			return nil, fmt.Errorf(", then at most once each of %s (column %q)", strings.Join(CSVOptional, ", "), h)
		}
		cols[h] = len(CSVHeader) + i
	}
	return cols, nil
}

// setOptional reads the optional columns of rec into r; the error names
// the column.
func (r *Result) setOptional(cols map[string]int, rec []string) error {
	if i, ok := cols["purchase_date"]; ok {
		r.PurchaseDate = strings.TrimSpace(rec[i])
		if _, err := time.Parse(time.DateOnly, r.PurchaseDate); r.PurchaseDate != "" && err != nil {
			return fmt.Errorf("purchase_date: %q is not YYYY-MM-DD", r.PurchaseDate)
		}
	}
	if i, ok := cols["buyer"]; ok {
		r.Buyer = strings.TrimSpace(rec[i])
		if r.Buyer != "" && r.Buyer != BuyerConsumer && r.Buyer != BuyerBusiness {
			return fmt.Errorf("buyer: %q, want consumer or business (or empty: unknown)", r.Buyer)
		}
	}
	return nil
}

func csvErr(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("warranty: %s: line %d: column %d: %w", name, pe.Line, pe.Column, pe.Err)
	}
	return fmt.Errorf("warranty: %s: %w", name, err)
}

// Len is the number of registered serials.
func (c *CSV) Len() int { return len(c.byKey) }

// Check looks serial up; an unknown serial is a not_found Result.
func (c *CSV) Check(ctx context.Context, sn string) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("warranty: %w", err)
	}
	if res, ok := c.byKey[serial.Normalize(sn)]; ok {
		return res, nil
	}
	return Result{SerialNumber: sn, Status: StatusNotFound}, nil
}

// knownOnly blanks the optional fields of a form triage does not know:
// an unknown value stays unknown, never something else.
func (r *Result) knownOnly() {
	r.PurchaseDate = strings.TrimSpace(r.PurchaseDate)
	if _, err := time.Parse(time.DateOnly, r.PurchaseDate); err != nil {
		r.PurchaseDate = ""
	}
	r.Buyer = strings.TrimSpace(r.Buyer)
	if r.Buyer != BuyerConsumer && r.Buyer != BuyerBusiness {
		r.Buyer = ""
	}
}
