package tickets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// service is a fake ticket service speaking the documented contract,
// deduplicating on the Idempotency-Key header.
type service struct {
	mu     sync.Mutex
	byKey  map[string]string
	bodies []Request
	auth   []string
	status int // forced status, 0 = normal
	body   string
}

func (s *service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.status != 0 {
		w.WriteHeader(s.status)
		fmt.Fprint(w, s.body)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/tickets" || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	var req Request
	data, _ := io.ReadAll(r.Body)
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.bodies = append(s.bodies, req)
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	key := r.Header.Get("Idempotency-Key")
	if key == "" || key != req.IdempotencyKey {
		http.Error(w, "idempotency key mismatch", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if id, ok := s.byKey[key]; ok {
		fmt.Fprintf(w, `{"ticket_id":%q,"status":"existing"}`, id)
		return
	}
	if s.byKey == nil {
		s.byKey = map[string]string{}
	}
	id := FormatID(int64(len(s.byKey) + 41))
	s.byKey[key] = id
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, `{"ticket_id":%q}`, id) // status omitted: defaults to created
}

func TestHTTPCreate(t *testing.T) {
	svc := &service{}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	h, err := NewHTTP(HTTPConfig{BaseURL: srv.URL + "/v1/", Token: "t0k"})
	if err != nil {
		t.Fatal(err)
	}
	var got []Ticket
	for _, key := range []string{"k1", "k2", "k1"} {
		tk, err := h.Create(context.Background(), req(key))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tk)
	}
	want := []Ticket{{"TKT-000041", StatusCreated}, {"TKT-000042", StatusCreated}, {"TKT-000041", StatusExisting}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tickets (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Request{req("k1"), req("k2"), req("k1")}, svc.bodies); diff != "" {
		t.Errorf("request bodies (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Bearer t0k", "Bearer t0k", "Bearer t0k"}, svc.auth); diff != "" {
		t.Errorf("Authorization (-want +got):\n%s", diff)
	}
	if _, err := h.Create(context.Background(), Request{}); !errors.Is(err, ErrNoKey) {
		t.Errorf("empty key: %v", err)
	}
}

// failure is what a caller can tell about a failed call.
type failure struct {
	Msg        string
	StatusCode int
	Temporary  bool
}

func TestHTTPCreateErrors(t *testing.T) {
	// Status classification is httpapi's; the status rows check it is wired.
	tests := []struct {
		name   string
		status int
		body   string
		want   failure
	}{
		{"429", http.StatusTooManyRequests, "slow down", failure{"tickets: http: POST /tickets: 429 Too Many Requests: slow down", 429, true}},
		{"409", http.StatusConflict, "conflict", failure{"tickets: http: POST /tickets: 409 Conflict: conflict", 409, false}},
		{"422", http.StatusUnprocessableEntity, "bad serial", failure{"tickets: http: POST /tickets: 422 Unprocessable Entity: bad serial", 422, false}},
		{"202", http.StatusAccepted, `{"ticket_id":"TKT-000001"}`, failure{"tickets: http: POST /tickets: unexpected status 202", 202, false}},
		{"bad json", http.StatusCreated, "[", failure{"tickets: http: decode response: unexpected end of JSON input", 201, false}},
		{"no id", http.StatusOK, `{"status":"created"}`, failure{"tickets: http: response has no ticket_id", 200, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(&service{status: tt.status, body: tt.body})
			defer srv.Close()
			h, err := NewHTTP(HTTPConfig{BaseURL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			_, err = h.Create(context.Background(), req("k"))
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
	for _, u := range []string{"", "tickets.example.com", "ftp://x/"} {
		if _, err := NewHTTP(HTTPConfig{BaseURL: u}); err == nil || !strings.HasPrefix(err.Error(), "tickets: BaseURL") {
			t.Errorf("NewHTTP(%q): err = %v, want a tickets: BaseURL error", u, err)
		}
	}
}
