package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage/internal/clients/httpapi"
)

func newTool(t *testing.T, cfg httpapi.ToolConfig) *httpapi.Tool {
	t.Helper()
	tool, err := httpapi.NewTool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

func TestGetFillsPlaceholders(t *testing.T) {
	var gotPath, gotQuery, gotAuth, gotMethod string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotMethod, gotPath, gotQuery, gotAuth = r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"order_id":"A/1 2","status":"shipped"}`)
	}))
	defer srv.Close()
	tool := newTool(t, httpapi.ToolConfig{
		URL:     srv.URL + "/orders/{order_id}/lines/{line}",
		Headers: map[string]string{"Authorization": "Bearer tok-123"},
	})
	if diff := cmp.Diff([]string{"order_id", "line"}, httpapi.Placeholders(srv.URL+"/orders/{order_id}/lines/{line}")); diff != "" {
		t.Errorf("Placeholders (-want +got):\n%s", diff)
	}
	got, err := tool.Call(context.Background(), map[string]any{"order_id": "A/1 2", "line": float64(3), "verbose": true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"order_id": "A/1 2", "status": "shipped"}, got); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	// A slash in an argument stays inside one path segment; arguments that
	// fill no placeholder go to the query string.
	if gotMethod != "GET" || gotPath != "/orders/A%2F1%202/lines/3" || gotQuery != "verbose=true" || gotAuth != "Bearer tok-123" {
		t.Errorf("request: %s %s ? %s auth %q", gotMethod, gotPath, gotQuery, gotAuth)
	}
}

// PathEscape leaves "." and "..": a model's ".." as a whole segment would
// turn /orders/{id}/status into /orders/../status, /status once cleaned by
// the service or a proxy. Such values (and an empty one) are refused before
// any request.
func TestPathPlaceholderRefusesDotSegments(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	tool := newTool(t, httpapi.ToolConfig{URL: srv.URL + "/orders/{order_id}/status?lang={lang}"})
	for _, v := range []string{"..", ".", ""} {
		_, err := tool.Call(context.Background(), map[string]any{"order_id": v, "lang": "pl"})
		if !errors.Is(err, httpapi.ErrArgs) {
			t.Errorf("order_id %q: err %v, want ErrArgs", v, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d request(s) reached the service", n)
	}
	// In the query string a dot is just a value.
	if _, err := tool.Call(context.Background(), map[string]any{"order_id": "A1", "lang": ".."}); err != nil {
		t.Errorf("query value \"..\": %v", err)
	}
}

func TestGetQueryPlaceholderIsQueryEscaped(t *testing.T) {
	var gotQ string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotQ = r.URL.Query().Get("q")
		io.WriteString(w, `[1,2]`)
	}))
	defer srv.Close()
	tool := newTool(t, httpapi.ToolConfig{URL: srv.URL + "/search?q={query}&lang=pl"})
	got, err := tool.Call(context.Background(), map[string]any{"query": "a&b=c d"})
	if err != nil {
		t.Fatal(err)
	}
	if gotQ != "a&b=c d" {
		t.Errorf("q = %q", gotQ)
	}
	if diff := cmp.Diff(map[string]any{"value": []any{1.0, 2.0}}, got); diff != "" {
		t.Errorf("a non-object answer (-want +got):\n%s", diff)
	}
}

func TestMissingPlaceholderArgument(t *testing.T) {
	tool := newTool(t, httpapi.ToolConfig{URL: "http://127.0.0.1:1/orders/{order_id}"})
	_, err := tool.Call(context.Background(), map[string]any{"other": "x"})
	if !errors.Is(err, httpapi.ErrArgs) || !strings.Contains(err.Error(), "order_id") {
		t.Fatalf("err = %v, want ErrArgs naming order_id", err)
	}
	_, err = tool.Call(context.Background(), map[string]any{"order_id": map[string]any{"x": 1}})
	if !errors.Is(err, httpapi.ErrArgs) {
		t.Fatalf("an object for a placeholder: err = %v, want ErrArgs", err)
	}
}

func TestPostSendsJSONBody(t *testing.T) {
	var got map[string]any
	var ctype, path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			t.Errorf("method %s", r.Method)
		}
		ctype, path = r.Header.Get("Content-Type"), r.URL.Path
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Error(err)
		}
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":"C-1"}`)
	}))
	defer srv.Close()
	tool := newTool(t, httpapi.ToolConfig{Method: "post", URL: srv.URL + "/customers/{customer}/notes"})
	res, err := tool.Call(context.Background(), map[string]any{"customer": "c1", "text": "hello", "n": float64(2)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"text": "hello", "n": 2.0}, got); diff != "" {
		t.Errorf("body: the placeholder argument is in the URL, the rest in the body (-want +got):\n%s", diff)
	}
	if ctype != "application/json" || path != "/customers/c1/notes" || res["id"] != "C-1" {
		t.Errorf("content-type %q path %q result %v", ctype, path, res)
	}
}

func TestNon2xxIsAnErrorWithTheStatus(t *testing.T) {
	for _, tc := range []struct {
		status    int
		temporary bool
	}{{404, false}, {400, false}, {429, true}, {503, true}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(tc.status)
			io.WriteString(w, `{"error":"nope"}`)
		}))
		tool := newTool(t, httpapi.ToolConfig{Name: "get_order_status", URL: srv.URL + "/x"})
		_, err := tool.Call(context.Background(), nil)
		srv.Close()
		var he *httpapi.ToolError
		if !errors.As(err, &he) {
			t.Fatalf("%d: err = %v, want *httpapi.ToolError", tc.status, err)
		}
		if he.Status != tc.status || he.Temporary() != tc.temporary {
			t.Errorf("%d: Status %d Temporary %v", tc.status, he.Status, he.Temporary())
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "httptool: tool get_order_status") || !strings.Contains(msg, http.StatusText(tc.status)) || !strings.Contains(msg, "nope") {
			t.Errorf("%d: message %q", tc.status, msg)
		}
	}
}

func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	tool := newTool(t, httpapi.ToolConfig{URL: srv.URL, Timeout: 50 * time.Millisecond})
	_, err := tool.Call(context.Background(), nil)
	var he *httpapi.ToolError
	if !errors.As(err, &he) || !he.Temporary() || !strings.Contains(err.Error(), "no answer within 50ms") {
		t.Fatalf("err = %v, want a temporary timeout error", err)
	}
}

func TestResponseSizeCap(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"text":"`+strings.Repeat("x", 5000)+`"}`)
	}))
	defer srv.Close()
	tool := newTool(t, httpapi.ToolConfig{URL: srv.URL, MaxResponseBytes: 1000})
	_, err := tool.Call(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "larger than 1000 bytes") {
		t.Fatalf("err = %v, want the size cap", err)
	}
	big := newTool(t, httpapi.ToolConfig{URL: srv.URL, MaxResponseBytes: 6000})
	if _, err := big.Call(context.Background(), nil); err != nil {
		t.Fatalf("under the cap: %v", err)
	}
}

func TestRedirects(t *testing.T) {
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		io.WriteString(w, `{"stolen":true}`)
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/here", http.StatusFound)
		case "/here":
			io.WriteString(w, `{"ok":true}`)
		case "/away":
			http.Redirect(w, r, other.URL+"/steal", http.StatusFound)
		}
	}))
	defer srv.Close()

	same := newTool(t, httpapi.ToolConfig{URL: srv.URL + "/moved"})
	if got, err := same.Call(context.Background(), nil); err != nil || got["ok"] != true {
		t.Fatalf("same-host redirect: %v %v", got, err)
	}
	away := newTool(t, httpapi.ToolConfig{URL: srv.URL + "/away", Headers: map[string]string{"Authorization": "Bearer secret-token"}})
	_, err := away.Call(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "redirect to another host") {
		t.Fatalf("cross-host redirect: err = %v", err)
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("the other host was reached %d times", n)
	}
}

func TestSecretsNeverInErrorsOrLogs(t *testing.T) {
	const token = "s3cr3t-T0KEN"
	const apiKey = "k3y-VALUE-9"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A careless server echoing the request back in its error page.
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, "bad auth "+r.Header.Get("Authorization")+" for "+r.URL.String())
	}))
	defer srv.Close()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	tool := newTool(t, httpapi.ToolConfig{
		URL:     srv.URL + "/orders/{id}?key=" + apiKey,
		Headers: map[string]string{"Authorization": "Bearer " + token},
		Logger:  log,
	})
	_, err1 := tool.Call(context.Background(), map[string]any{"id": "1"})

	// A transport failure: *url.Error would quote the whole URL.
	dead := newTool(t, httpapi.ToolConfig{URL: "http://127.0.0.1:1/orders?key=" + apiKey, Logger: log})
	_, err2 := dead.Call(context.Background(), nil)

	for _, err := range []error{err1, err2} {
		if err == nil {
			t.Fatal("want an error")
		}
		for _, secret := range []string{token, apiKey} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q leaks a secret", err)
			}
		}
	}
	if !strings.Contains(err1.Error(), "[redacted]") {
		t.Errorf("error %q: want the echoed secret redacted", err1)
	}
	if s := logs.String(); strings.Contains(s, token) || strings.Contains(s, apiKey) || !strings.Contains(s, "httptool: call") {
		t.Errorf("logs leak a secret or say nothing:\n%s", s)
	}
}

// A short query value is a setting, not a secret: redacting it would blank
// every occurrence in the status line and body that reach the model.
func TestShortQueryValueNotRedacted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, "order 1 not found on page 1")
	}))
	defer srv.Close()
	tool := newTool(t, httpapi.ToolConfig{URL: srv.URL + "/orders/{id}?page=1&key=k3y-VALUE-9"})
	_, err := tool.Call(context.Background(), map[string]any{"id": "1"})
	if err == nil || !strings.Contains(err.Error(), "order 1 not found on page 1") {
		t.Fatalf("err = %v, want the server's text with its 1s intact", err)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, cfg := range []httpapi.ToolConfig{
		{URL: ""},
		{URL: "ftp://example.com/x"},
		{URL: "/relative/{id}"},
		{URL: "http://example.com", Method: "DELETE"},
		{URL: "http://example.com", Headers: map[string]string{"X": "a\r\nInjected: 1"}},
	} {
		if _, err := httpapi.NewTool(cfg); err == nil || !strings.HasPrefix(err.Error(), "httptool: ") {
			t.Errorf("NewTool(%+v) = %v, want an httptool error", cfg, err)
		}
	}
}

// The overhead of one HTTP tool call against a loopback service.
func BenchmarkCall(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"status":"shipped"}`)
	}))
	defer srv.Close()
	tool, err := httpapi.NewTool(httpapi.ToolConfig{URL: srv.URL + "/orders/{id}", Headers: map[string]string{"Authorization": "Bearer x-token"}})
	if err != nil {
		b.Fatal(err)
	}
	args := map[string]any{"id": "12345"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool.Call(context.Background(), args); err != nil {
			b.Fatal(err)
		}
	}
}
