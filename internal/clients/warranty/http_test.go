package warranty

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// service is a fake warranty service speaking the documented contract.
type service struct {
	mu       sync.Mutex
	requests []string // "METHOD escaped-path auth"
	status   int      // forced status for every request, 0 = normal
	body     string   // forced body
	block    chan struct{}
}

func (s *service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.Method+" "+r.URL.EscapedPath()+" "+r.Header.Get("Authorization"))
	status, body, block := s.status, s.body, s.block
	s.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-r.Context().Done():
			return
		}
	}
	if status != 0 {
		w.WriteHeader(status)
		fmt.Fprint(w, body)
		return
	}
	serial, ok := strings.CutPrefix(r.URL.Path, "/api/warranty/")
	if r.Method != http.MethodGet || !ok {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	switch serial {
	case "SN-48213-PL":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"serial_number":"SN-48213-PL","status":"valid","expiration_date":"2027-03-01","product":"EC-200"}`)
	case "S/N 1?":
		fmt.Fprint(w, `{"status":"expired","expiration_date":"2020-01-01"}`)
	default:
		http.NotFound(w, r)
	}
}

func (s *service) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

func TestHTTPCheck(t *testing.T) {
	svc := &service{}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	h, err := NewHTTP(HTTPConfig{BaseURL: srv.URL + "/api/", Token: "t0k", Client: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		serial string
		want   Result
	}{
		{"SN-48213-PL", Result{SerialNumber: "SN-48213-PL", Status: StatusValid, ExpirationDate: "2027-03-01", Product: "EC-200"}},
		{"S/N 1?", Result{SerialNumber: "S/N 1?", Status: StatusExpired, ExpirationDate: "2020-01-01"}},
		{"SN-0", Result{SerialNumber: "SN-0", Status: StatusNotFound}},
	}
	for _, tt := range tests {
		got, err := h.Check(context.Background(), tt.serial)
		if err != nil {
			t.Fatalf("Check(%q): %v", tt.serial, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Check(%q) (-want +got):\n%s", tt.serial, diff)
		}
	}
	want := []string{
		"GET /api/warranty/SN-48213-PL Bearer t0k",
		"GET /api/warranty/S%2FN%201%3F Bearer t0k",
		"GET /api/warranty/SN-0 Bearer t0k",
	}
	if diff := cmp.Diff(want, svc.seen()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestHTTPErrors(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		body      string
		want      string
		temporary bool
	}{
		// Status classification is httpjson's; these rows check it is wired.
		{"429", http.StatusTooManyRequests, "slow down", "429", true},
		{"401", http.StatusUnauthorized, "no", "401", false},
		{"204", http.StatusNoContent, "", "unexpected status 204", false},
		{"bad json", http.StatusOK, "{", "decode response", false},
		{"unknown status", http.StatusOK, `{"status":"maybe"}`, `"maybe"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(&service{status: tt.status, body: tt.body})
			defer srv.Close()
			h, err := NewHTTP(HTTPConfig{BaseURL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			_, err = h.Check(context.Background(), "SN-1")
			checkErr(t, err, tt.want, tt.temporary)
		})
	}
}

func checkErr(t *testing.T, err error, want string, temporary bool) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "warranty: http: ") {
		t.Fatalf("err = %v, want %q", err, want)
	}
	var he *HTTPError
	if !errors.As(err, &he) {
		t.Errorf("err = %T, want an *HTTPError", err)
	}
	var te interface{ Temporary() bool }
	if !errors.As(err, &te) || te.Temporary() != temporary {
		t.Errorf("Temporary = %v, want %v", te != nil && te.Temporary(), temporary)
	}
}

func TestNewHTTP(t *testing.T) {
	for _, u := range []string{"", "ftp://x", "localhost:8080", "http://"} {
		if _, err := NewHTTP(HTTPConfig{BaseURL: u}); err == nil || !strings.HasPrefix(err.Error(), "warranty: BaseURL") {
			t.Errorf("NewHTTP(%q): err = %v, want a warranty: BaseURL error", u, err)
		}
	}
	if _, err := NewHTTP(HTTPConfig{BaseURL: "https://w.example.com/v1/"}); err != nil {
		t.Fatal(err)
	}
}
