// Package llm builds the Model triage talks to: Gemini through the genai SDK
// configured the SDK's own way (GEMINI_API_KEY / GOOGLE_API_KEY, Vertex env
// vars, GOOGLE_GEMINI_BASE_URL), or the built-in offline model when no
// credentials are set or offline mode is forced.
package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"google.golang.org/genai"

	"triage/internal/agent"
	"triage/internal/offline"
	"triage/internal/scenario"
)

// DefaultModel is the Gemini model used when none is given.
const DefaultModel = "gemini-2.5-flash"

// Options choose the model.
type Options struct {
	// Offline forces the built-in offline model.
	Offline bool
	// Faults are injected into the offline model (tests, eval).
	Faults []offline.Fault
	// HTTPClient, when set, carries every model request (record/replay).
	// Otherwise the client's transport keeps an idle connection for each
	// of Concurrency calls (see Transport).
	HTTPClient *http.Client
	// Concurrency is how many model calls may be in flight at once (emails
	// processed in parallel); default 4.
	Concurrency int
	// Getenv reads the environment (default os.Getenv), for tests.
	Getenv func(string) string
	// Scenarios are the loaded scenarios, whose frontmatter the offline
	// model follows (see offline.Options.Scenarios).
	Scenarios *scenario.Set
}

// Model is a ready model and how to describe it to people.
type Model struct {
	agent.Model
	// Offline is true for the built-in offline model.
	Offline bool
	// Description says which model is in use, e.g.
	// "built-in offline model (deterministic stand-in, not an LLM)".
	Description string
	// Server is the offline server (nil for Gemini).
	Server *offline.Server
}

// Close stops the offline server, if any.
func (m *Model) Close() error {
	if m.Server != nil {
		return m.Server.Close()
	}
	return nil
}

// HasCredentials reports whether the environment configures Gemini.
func HasCredentials(getenv func(string) string) bool {
	if getenv == nil {
		getenv = os.Getenv
	}
	if getenv("GEMINI_API_KEY") != "" || getenv("GOOGLE_API_KEY") != "" {
		return true
	}
	v := strings.ToLower(getenv("GOOGLE_GENAI_USE_VERTEXAI"))
	return (v == "1" || v == "true") && getenv("GOOGLE_CLOUD_PROJECT") != ""
}

// New returns Gemini when the environment has credentials and Offline is
// false; otherwise it starts the offline model on loopback and points a real
// genai client at it.
func New(ctx context.Context, o Options) (*Model, error) {
	if len(o.Faults) > 0 && !o.Offline && HasCredentials(o.Getenv) {
		return nil, errors.New("llm: faults can only be injected into the offline model")
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: Transport(o.Concurrency)}
	}
	if !o.Offline && HasCredentials(o.Getenv) {
		c, err := geminiClient(ctx, hc, o.HTTPClient == nil)
		if err != nil {
			return nil, err
		}
		desc := "Gemini API"
		if c.ClientConfig().Backend == genai.BackendVertexAI {
			desc = "Gemini on Vertex AI"
		}
		if u := c.ClientConfig().HTTPOptions.BaseURL; u != "" {
			desc += " at " + u
		}
		return &Model{Model: &agent.Gemini{Client: c}, Description: desc}, nil
	}
	srv, err := offline.Start(offline.Options{Faults: o.Faults, Scenarios: o.Scenarios})
	if err != nil {
		return nil, fmt.Errorf("llm: offline model: %w", err)
	}
	c, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:      "offline",
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  hc,
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL()},
	})
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("llm: offline client: %w", err)
	}
	return &Model{
		Model:       &agent.Gemini{Client: c},
		Offline:     true,
		Description: "built-in offline model (deterministic stand-in, not an LLM)",
		Server:      srv,
	}, nil
}

// DefaultConcurrency is Options.Concurrency when unset.
const DefaultConcurrency = 4

// Transport is the HTTP transport of the model client: http.DefaultTransport's
// settings (proxy from the environment, timeouts, HTTP/2), keeping an idle
// connection per concurrent call. http.DefaultTransport keeps 2 per host, so
// at a concurrency of 4 most calls paid a new TCP and TLS handshake.
func Transport(concurrency int) *http.Transport {
	if concurrency <= 0 {
		concurrency = DefaultConcurrency
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	// Headroom for the detection call and retries overlapping the loop.
	t.MaxIdleConnsPerHost = concurrency + 2
	t.MaxIdleConns = max(t.MaxIdleConns, 2*t.MaxIdleConnsPerHost)
	return t
}

// geminiClient builds the genai client on hc, configured by the environment
// the SDK's way (no base URL of ours). The SDK only authenticates a client it
// builds itself: for Vertex AI with application default credentials and a
// client of ours (own), it gets what the SDK would add: the credentials
// (ClientConfig.UseDefaultCredentials) and the quota project header.
func geminiClient(ctx context.Context, hc *http.Client, own bool) (*genai.Client, error) {
	c, err := genai.NewClient(ctx, &genai.ClientConfig{HTTPClient: hc})
	if err != nil {
		return nil, fmt.Errorf("llm: gemini client: %w", err)
	}
	got := c.ClientConfig()
	if !own || got.Backend != genai.BackendVertexAI || got.APIKey != "" || got.Credentials != nil {
		return c, nil
	}
	cc := &genai.ClientConfig{HTTPClient: hc}
	if err := cc.UseDefaultCredentials(); err != nil {
		return nil, fmt.Errorf("llm: gemini client (Vertex AI): %w", err)
	}
	if qp, err := cc.Credentials.QuotaProjectID(ctx); err == nil && qp != "" {
		cc.HTTPOptions.Headers = http.Header{"X-Goog-User-Project": []string{qp}}
	}
	c, err = genai.NewClient(ctx, cc)
	if err != nil {
		return nil, fmt.Errorf("llm: gemini client (Vertex AI): %w", err)
	}
	return c, nil
}
