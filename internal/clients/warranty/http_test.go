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
	case "SN-2":
		fmt.Fprint(w, `{"status":"expired","expiration_date":"2025-01-31","purchase_date":"2025-06-01","buyer":"consumer"}`)
	case "SN-3":
		fmt.Fprint(w, `{"status":"expired","expiration_date":"2025-01-31","purchase_date":"01.06.2025","buyer":"government"}`)
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
		{"SN-2", Result{SerialNumber: "SN-2", Status: StatusExpired, ExpirationDate: "2025-01-31", PurchaseDate: "2025-06-01", Buyer: BuyerConsumer}},
		// Values of unknown forms stay unknown.
		{"SN-3", Result{SerialNumber: "SN-3", Status: StatusExpired, ExpirationDate: "2025-01-31"}},
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
		"GET /api/warranty/SN-2 Bearer t0k",
		"GET /api/warranty/SN-3 Bearer t0k",
	}
	if diff := cmp.Diff(want, svc.seen()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// failure is what a caller can tell about a failed call.
type failure struct {
	Msg        string
	StatusCode int
	Temporary  bool
}

func TestHTTPErrors(t *testing.T) {
	// Status classification is httpapi's; the status rows check it is wired.
	tests := []struct {
		name   string
		status int
		body   string
		want   failure
	}{
		{"429", http.StatusTooManyRequests, "slow down", failure{"warranty: http: GET /warranty/SN-1: 429 Too Many Requests: slow down", 429, true}},
		{"401", http.StatusUnauthorized, "no", failure{"warranty: http: GET /warranty/SN-1: 401 Unauthorized: no", 401, false}},
		{"204", http.StatusNoContent, "", failure{"warranty: http: GET /warranty/SN-1: unexpected status 204", 204, false}},
		{"bad json", http.StatusOK, "{", failure{"warranty: http: decode response: unexpected end of JSON input", 200, false}},
		{"unknown status", http.StatusOK, `{"status":"maybe"}`, failure{`warranty: http: response status "maybe": want valid, expired or not_found`, 200, false}},
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
			var he *HTTPError
			if !errors.As(err, &he) {
				t.Fatalf("err = %v (%T), want an *HTTPError", err, err)
			}
			if diff := cmp.Diff(tt.want, failure{err.Error(), he.StatusCode, he.Temporary()}); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
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
