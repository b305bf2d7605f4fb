// Package warranty answers "is this serial under warranty?" from a local CSV
// registry or a remote HTTP JSON service.
package warranty

import "context"

// Status values.
const (
	StatusValid    = "valid"
	StatusExpired  = "expired"
	StatusNotFound = "not_found"
)

// Result is the answer for one serial; it is what the model sees.
type Result struct {
	SerialNumber   string `json:"serial_number"`
	Status         string `json:"status"`
	ExpirationDate string `json:"expiration_date,omitempty"` // YYYY-MM-DD
	Product        string `json:"product,omitempty"`
}

// Checker looks up one serial. A serial that is not registered is a Result
// with StatusNotFound, not an error; errors mean the lookup itself failed.
type Checker interface {
	Check(ctx context.Context, serial string) (Result, error)
}

// CSV is a registry loaded once from a file with the header
// serial_number,status,expiration_date,product. Lookups compare serials
// with serial.Normalize.
type CSV struct{}

var _ Checker = (*CSV)(nil)

// LoadCSV reads and validates the file; errors name the file, line and field
// (e.g. bad status, bad date, duplicate serial, wrong header).
func LoadCSV(path string) (*CSV, error) { panic("TODO") }

func (c *CSV) Check(ctx context.Context, serial string) (Result, error) { panic("TODO") }

// HTTP calls a remote service: GET {BaseURL}/warranty/{serial} answering
// 200 with a Result JSON object (404 means not_found). Non-2xx other than
// 404, transport errors and timeouts are errors; 429/5xx/transport errors are
// temporary (the error has a Temporary() bool method returning true).
type HTTP struct {
	BaseURL string
	Token   string      // optional bearer token
	Timeout int         // seconds, default 10
	Client  interface{} // placeholder: helper replaces with *http.Client
}
