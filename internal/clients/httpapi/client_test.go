package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// seen is one request as the service received it.
type seen struct {
	Method, Path                         string // path escaped
	Accept, ContentType, Auth, Idem, Via string // headers
	Body                                 string
}

// service records requests and answers every one with status and body.
type service struct {
	mu       sync.Mutex
	requests []seen
	status   int // 0 means 200
	body     string
	block    chan struct{} // when set, hold each request until closed
}

func (s *service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	data, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.requests = append(s.requests, seen{
		Method: r.Method, Path: r.URL.EscapedPath(),
		Accept: r.Header.Get("Accept"), ContentType: r.Header.Get("Content-Type"),
		Auth: r.Header.Get("Authorization"), Idem: r.Header.Get("Idempotency-Key"), Via: strings.Join(r.Header.Values("Via"), ","),
		Body: string(data),
	})
	status, body, block := s.status, s.body, s.block
	s.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-r.Context().Done():
			return
		}
	}
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func (s *service) seen() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.requests...)
}

func newClient(t *testing.T, cfg ClientConfig) *Client {
	t.Helper()
	c, err := NewClient(cfg, "svc")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNewClient(t *testing.T) {
	for _, u := range []string{"", "ftp://x", "localhost:8080", "http://", "svc.example.com", "://x"} {
		_, err := NewClient(ClientConfig{BaseURL: u}, "svc")
		if err == nil || !strings.HasPrefix(err.Error(), "svc: BaseURL ") {
			t.Errorf("NewClient(%q): err = %v, want a svc: BaseURL error", u, err)
		}
	}
	c := newClient(t, ClientConfig{BaseURL: "https://w.example.com/v1/"})
	if c.baseURL != "https://w.example.com/v1" || c.timeout != DefaultTimeout || c.client == nil || c.token != "" {
		t.Errorf("defaults: %+v", c)
	}
	hc := &http.Client{}
	c = newClient(t, ClientConfig{BaseURL: "http://w", Token: "t", Client: hc, Timeout: time.Second})
	if c.baseURL != "http://w" || c.timeout != time.Second || c.client != hc || c.token != "t" {
		t.Errorf("explicit config: %+v", c)
	}
}

func TestDoRequest(t *testing.T) {
	tests := []struct {
		name   string
		cfg    ClientConfig
		method string
		path   string
		in     any
		header http.Header
		want   seen
	}{
		{
			name: "GET with token", cfg: ClientConfig{Token: "t0k"}, method: http.MethodGet, path: "/warranty/S%2FN%201%3F",
			want: seen{Method: "GET", Path: "/api/warranty/S%2FN%201%3F", Accept: "application/json", Auth: "Bearer t0k"},
		},
		{
			name: "GET without token", method: http.MethodGet, path: "/x",
			want: seen{Method: "GET", Path: "/api/x", Accept: "application/json"},
		},
		{
			name: "POST JSON with header", cfg: ClientConfig{Token: "t0k"}, method: http.MethodPost, path: "/tickets",
			in:     map[string]string{"serial_number": "SN-1"},
			header: http.Header{"Idempotency-Key": {"k1"}, "Via": {"a", "b"}},
			want: seen{Method: "POST", Path: "/api/tickets", Accept: "application/json", ContentType: "application/json",
				Auth: "Bearer t0k", Idem: "k1", Via: "a,b", Body: `{"serial_number":"SN-1"}`},
		},
		{
			name: "header overrides defaults", cfg: ClientConfig{Token: "t0k"}, method: http.MethodPut, path: "/x",
			header: http.Header{"Accept": {"text/plain"}, "Authorization": {"Basic eA=="}},
			want:   seen{Method: "PUT", Path: "/api/x", Accept: "text/plain", Auth: "Basic eA=="},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := &service{status: http.StatusCreated, body: ` {"ok":true} `}
			srv := httptest.NewServer(svc)
			defer srv.Close()
			tt.cfg.BaseURL = srv.URL + "/api/"
			status, body, err := newClient(t, tt.cfg).Do(context.Background(), tt.method, tt.path, tt.in, tt.header)
			if err != nil {
				t.Fatal(err)
			}
			if status != http.StatusCreated || string(body) != ` {"ok":true} ` {
				t.Errorf("Do = %d %q, want 201 and the body as sent", status, body)
			}
			if diff := cmp.Diff([]seen{tt.want}, svc.seen()); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDoStatus(t *testing.T) {
	long := strings.Repeat("x", 300)
	tests := []struct {
		status    int
		body      string
		want      string // the error message; "" means no error
		temporary bool
	}{
		{http.StatusOK, "{}", "", false},
		{http.StatusCreated, "{}", "", false},
		{http.StatusNoContent, "", "", false},
		{http.StatusTooManyRequests, "slow down", "svc: http: GET /p: 429 Too Many Requests: slow down", true},
		{http.StatusInternalServerError, " oops\n", "svc: http: GET /p: 500 Internal Server Error: oops", true},
		{http.StatusBadGateway, "", "svc: http: GET /p: 502 Bad Gateway: ", true},
		{http.StatusServiceUnavailable, long, "svc: http: GET /p: 503 Service Unavailable: " + long[:200] + "...", true},
		{http.StatusBadRequest, "bad", "svc: http: GET /p: 400 Bad Request: bad", false},
		{http.StatusUnauthorized, "no", "svc: http: GET /p: 401 Unauthorized: no", false},
		{http.StatusNotFound, "gone", "svc: http: GET /p: 404 Not Found: gone", false},
		{http.StatusConflict, "conflict", "svc: http: GET /p: 409 Conflict: conflict", false},
		{http.StatusUnprocessableEntity, "bad serial", "svc: http: GET /p: 422 Unprocessable Entity: bad serial", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			srv := httptest.NewServer(&service{status: tt.status, body: tt.body})
			defer srv.Close()
			status, body, err := newClient(t, ClientConfig{BaseURL: srv.URL}).Do(context.Background(), http.MethodGet, "/p", nil, nil)
			if status != tt.status || string(body) != tt.body {
				t.Errorf("Do = %d %q, want %d %q (returned with or without an error)", status, body, tt.status, tt.body)
			}
			if tt.want == "" {
				if err != nil {
					t.Errorf("err = %v, want nil", err)
				}
				return
			}
			checkErr(t, err, tt.want, tt.temporary)
			var e *ClientError
			if errors.As(err, &e); e.StatusCode != tt.status {
				t.Errorf("StatusCode = %d, want %d", e.StatusCode, tt.status)
			}
		})
	}
}

// checkErr wants err to be an *ClientError reading want (prefix for transport
// errors, whose tail varies) with the given classification.
func checkErr(t *testing.T, err error, want string, temporary bool) {
	t.Helper()
	var e *ClientError
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want an *ClientError", err, err)
	}
	if got := err.Error(); !strings.HasPrefix(got, want) {
		t.Errorf("err = %q, want %q", got, want)
	}
	var te interface{ Temporary() bool }
	if !errors.As(err, &te) || te.Temporary() != temporary {
		t.Errorf("Temporary = %v, want %v", e.Temporary(), temporary)
	}
}

func TestDoTransport(t *testing.T) {
	blocked := &service{block: make(chan struct{})}
	slow := httptest.NewServer(blocked)
	defer slow.Close()
	defer close(blocked.block)
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()

	tests := []struct {
		name      string
		cfg       ClientConfig
		ctx       context.Context
		want      string
		is        error
		temporary bool
	}{
		{"timeout", ClientConfig{BaseURL: slow.URL, Timeout: 50 * time.Millisecond}, context.Background(), "svc: http: Get ", context.DeadlineExceeded, true},
		{"caller deadline", ClientConfig{BaseURL: slow.URL}, deadline(t, 50*time.Millisecond), "svc: http: Get ", context.DeadlineExceeded, true},
		{"cancelled", ClientConfig{BaseURL: slow.URL}, cancelled, "svc: http: Get ", context.Canceled, false},
		{"connection refused", ClientConfig{BaseURL: closedURL}, context.Background(), "svc: http: Get ", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body, err := newClient(t, tt.cfg).Do(tt.ctx, http.MethodGet, "/p", nil, nil)
			if status != 0 || body != nil {
				t.Errorf("Do = %d %q, want 0 and no body", status, body)
			}
			checkErr(t, err, tt.want, tt.temporary)
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want errors.Is %v", err, tt.is)
			}
		})
	}
}

func deadline(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestDoBodyCap(t *testing.T) {
	tests := []struct {
		name   string
		status int
		size   int
		want   int
	}{
		{"under", http.StatusOK, MaxBody - 1, MaxBody - 1},
		{"at", http.StatusOK, MaxBody, MaxBody},
		{"over", http.StatusOK, MaxBody + 4096, MaxBody},
		{"over on error", http.StatusBadGateway, 3 * MaxBody, MaxBody},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(&service{status: tt.status, body: strings.Repeat("a", tt.size)})
			defer srv.Close()
			_, body, _ := newClient(t, ClientConfig{BaseURL: srv.URL}).Do(context.Background(), http.MethodGet, "/big", nil, nil)
			if len(body) != tt.want {
				t.Errorf("read %d bytes, want %d", len(body), tt.want)
			}
		})
	}
}

func TestDoEncodeError(t *testing.T) {
	svc := &service{}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	_, _, err := newClient(t, ClientConfig{BaseURL: srv.URL}).Do(context.Background(), http.MethodPost, "/p", map[string]any{"f": func() {}}, nil)
	checkErr(t, err, "svc: http: encode request: json: unsupported type", false)
	if n := len(svc.seen()); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}

func TestErrorf(t *testing.T) {
	c := newClient(t, ClientConfig{BaseURL: "http://w"})
	base := errors.New("boom")
	err := c.Errorf(http.StatusOK, "decode response: %w", base)
	checkErr(t, err, "svc: http: decode response: boom", false)
	if !errors.Is(err, base) || err.StatusCode != http.StatusOK {
		t.Errorf("Errorf = %+v, want StatusCode 200 wrapping %v", err, base)
	}
	var zero ClientError = ClientError{Err: base}
	if got := zero.Error(); got != "httpapi: http: boom" {
		t.Errorf("unnamed Error = %q", got)
	}
}
