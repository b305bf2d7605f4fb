package model_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genai"

	"triage/internal/model"
)

func clearEnv(t *testing.T) {
	for _, k := range []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_GEMINI_BASE_URL"} {
		t.Setenv(k, "")
	}
}

func ask(t *testing.T, m *model.Model) *genai.GenerateContentResponse {
	t.Helper()
	resp, err := m.GenerateContent(context.Background(), model.DefaultModel,
		[]*genai.Content{genai.NewContentFromText("hello", genai.RoleUser)}, &genai.GenerateContentConfig{})
	if err != nil {
		t.Fatalf("GenerateContent: %v", err)
	}
	return resp
}

// geminiAt starts an offline server for the test and points the Gemini
// environment (a key and GOOGLE_GEMINI_BASE_URL) at it.
func geminiAt(t *testing.T, o model.OfflineOptions) *model.OfflineServer {
	t.Helper()
	srv, err := model.StartOffline(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	t.Setenv("GEMINI_API_KEY", "test-key")
	t.Setenv("GOOGLE_GEMINI_BASE_URL", srv.URL())
	return srv
}

// TestBaseURL: with a key and GOOGLE_GEMINI_BASE_URL, the Gemini path is taken
// and every request goes to that endpoint (here: an offline server standing in
// for any Gemini-compatible endpoint).
func TestBaseURL(t *testing.T) {
	clearEnv(t)
	srv := geminiAt(t, model.OfflineOptions{})

	m, err := model.New(context.Background(), model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Offline || m.Server != nil {
		t.Fatalf("with a key the Gemini path must be used, got offline")
	}
	ask(t, m)
	if srv.Requests() != 1 {
		t.Errorf("endpoint saw %d requests, want 1", srv.Requests())
	}
}

func TestOfflineWithoutKey(t *testing.T) {
	clearEnv(t)
	m, err := model.New(context.Background(), model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if !m.Offline || !strings.Contains(m.Description, "not an LLM") {
		t.Fatalf("no key: got %+v", m)
	}
	resp := ask(t, m)
	if resp.ModelVersion != model.OfflineModelVersion {
		t.Errorf("model version %q", resp.ModelVersion)
	}
}

func TestOfflineForcedAndFaults(t *testing.T) {
	clearEnv(t)
	t.Setenv("GEMINI_API_KEY", "k")
	if _, err := model.New(context.Background(), model.Options{Faults: []model.Fault{model.Fault503}}); err == nil {
		t.Error("faults with a live model must be refused")
	}
	m, err := model.New(context.Background(), model.Options{Offline: true, Faults: []model.Fault{model.Fault503}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	_, err = m.GenerateContent(context.Background(), "m", []*genai.Content{genai.NewContentFromText("x", genai.RoleUser)}, &genai.GenerateContentConfig{})
	var ae genai.APIError
	if !errors.As(err, &ae) || ae.Code != 503 {
		t.Errorf("injected fault: err %v", err)
	}
}

func TestHasCredentials(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tt := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"GEMINI_API_KEY": "x"}, true},
		{map[string]string{"GOOGLE_API_KEY": "x"}, true},
		{map[string]string{"GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_CLOUD_PROJECT": "p"}, true},
		{map[string]string{"GOOGLE_GENAI_USE_VERTEXAI": "1"}, false},
	} {
		if got := model.HasCredentials(env(tt.env)); got != tt.want {
			t.Errorf("HasCredentials(%v) = %v", tt.env, got)
		}
	}
}

// TestTransportKeepsConnections: N concurrent calls at a time through the
// real SDK reuse N connections round after round (the default transport
// keeps 2 idle per host, so at 8 it opened about 6 new ones per round).
func TestTransportKeepsConnections(t *testing.T) {
	for _, offlineMode := range []bool{false, true} {
		name := "gemini"
		if offlineMode {
			name = "offline"
		}
		t.Run(name, func(t *testing.T) {
			clearEnv(t)
			const concurrency, rounds = 8, 6
			var srv *model.OfflineServer
			m := func() *model.Model {
				if offlineMode {
					m, err := model.New(context.Background(), model.Options{Offline: true, Concurrency: concurrency})
					if err != nil {
						t.Fatal(err)
					}
					srv = m.Server
					return m
				}
				srv = geminiAt(t, model.OfflineOptions{Latency: 20 * time.Millisecond})
				m, err := model.New(context.Background(), model.Options{Concurrency: concurrency})
				if err != nil {
					t.Fatal(err)
				}
				return m
			}()
			defer m.Close()
			for range rounds {
				var wg sync.WaitGroup
				for range concurrency {
					wg.Go(func() { ask(t, m) })
				}
				wg.Wait()
			}
			if got := srv.Requests(); got != concurrency*rounds {
				t.Fatalf("server saw %d requests, want %d", got, concurrency*rounds)
			}
			// A connection whose answer was read may not be back in the
			// idle pool when the next round starts (net/http returns it
			// asynchronously), so a round may dial a few more; without
			// reuse every call would dial one.
			if got := srv.Connections(); got > 2*concurrency {
				t.Errorf("%d calls, %d at a time, opened %d connections; want at most %d (kept alive and reused)", concurrency*rounds, concurrency, got, 2*concurrency)
			}
		})
	}
}

func TestTransport(t *testing.T) {
	for _, tt := range []struct{ concurrency, want int }{{0, 3}, {1, 3}, {16, 18}} {
		tr := model.Transport(tt.concurrency)
		if tr.MaxIdleConnsPerHost != tt.want || tr.MaxIdleConns < tt.want || tr.Proxy == nil {
			t.Errorf("Transport(%d): MaxIdleConnsPerHost %d (want %d), MaxIdleConns %d, proxy from env %v",
				tt.concurrency, tr.MaxIdleConnsPerHost, tt.want, tr.MaxIdleConns, tr.Proxy != nil)
		}
	}
}

// TestTransportWritesARequestOnce: a request the size of an email's first
// (instructions of about 8 KB) leaves the model transport in one write over
// HTTP/1.1, through the real SDK; the default 4 KB buffer split it.
func TestTransportWritesARequestOnce(t *testing.T) {
	clearEnv(t)
	srv := geminiAt(t, model.OfflineOptions{})
	instructions := strings.Repeat("Answer in the customer's language; never promise a date the facts do not give. ", 100)
	sent := 0
	for _, tt := range []struct {
		name   string
		buffer int // 0: Transport's own
		want   func(writes int) bool
	}{
		{"default 4 KB buffer", 4 << 10, func(w int) bool { return w > 1 }},
		{"Transport", 0, func(w int) bool { return w == 1 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr := model.Transport(1)
			if tt.buffer > 0 {
				tr.WriteBufferSize = tt.buffer
			}
			var writes atomic.Int64
			dial := tr.DialContext
			tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := dial(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				return countingConn{c, &writes}, nil
			}
			m, err := model.New(context.Background(), model.Options{HTTPClient: &http.Client{Transport: tr}})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if _, err := m.GenerateContent(context.Background(), model.DefaultModel,
				[]*genai.Content{genai.NewContentFromText("hello", genai.RoleUser)},
				&genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText(instructions, genai.RoleUser)}); err != nil {
				t.Fatalf("GenerateContent: %v", err)
			}
			if n := srv.Requests(); n != sent+1 {
				t.Fatalf("the server saw %d requests, want %d", n, sent+1)
			}
			sent++
			if got := writes.Load(); !tt.want(int(got)) {
				t.Errorf("one request of %d KB of instructions took %d writes", len(instructions)>>10, got)
			}
		})
	}
}

// countingConn counts the writes made on a connection.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// TestVertexADCWithOwnTransport: with Vertex AI and application default
// credentials, the client built on our transport still authenticates (the
// SDK only does so for a client it builds itself) and names the quota
// project, as the SDK's own client does.
func TestVertexADCWithOwnTransport(t *testing.T) {
	clearEnv(t)
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"access_token":"adc-token","token_type":"Bearer","expires_in":3600}`)
	}))
	defer tokens.Close()
	type seen struct{ auth, quota, path string }
	got := make(chan seen, 1)
	vertex := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- seen{r.Header.Get("Authorization"), r.Header.Get("X-Goog-User-Project"), r.URL.Path}:
		default:
		}
		http.Error(w, `{"error":{"code":400,"message":"stop here","status":"INVALID_ARGUMENT"}}`, http.StatusBadRequest)
	}))
	defer vertex.Close()

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: must(x509.MarshalPKCS8PrivateKey(key))})
	sa, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "proj", "private_key_id": "k1", "private_key": string(pemKey),
		"client_email": "triage@proj.iam.gserviceaccount.com", "client_id": "1", "token_uri": tokens.URL,
		"quota_project_id": "billing-proj",
	})
	path := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(path, sa, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", path)
	t.Setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
	t.Setenv("GOOGLE_CLOUD_PROJECT", "proj")
	t.Setenv("GOOGLE_CLOUD_LOCATION", "europe-west4")
	t.Setenv("GOOGLE_VERTEX_BASE_URL", vertex.URL)

	m, err := model.New(context.Background(), model.Options{Concurrency: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Offline || !strings.Contains(m.Description, "Vertex") {
		t.Fatalf("model = %q, want Gemini on Vertex AI", m.Description)
	}
	_, err = m.GenerateContent(context.Background(), model.DefaultModel,
		[]*genai.Content{genai.NewContentFromText("hello", genai.RoleUser)}, &genai.GenerateContentConfig{})
	var ae genai.APIError
	if !errors.As(err, &ae) || ae.Code != 400 {
		t.Fatalf("GenerateContent: err = %v, want the stand-in's 400", err)
	}
	s := <-got
	if s.auth != "Bearer adc-token" || s.quota != "billing-proj" {
		t.Errorf("request to %s: Authorization %q, X-Goog-User-Project %q; want the ADC token and billing-proj", s.path, s.auth, s.quota)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
