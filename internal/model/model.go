// Package model is the model triage talks to: Gemini through the genai SDK
// configured the SDK's own way (GEMINI_API_KEY / GOOGLE_API_KEY, Vertex env
// vars, GOOGLE_GEMINI_BASE_URL), an OpenAI-compatible Chat Completions
// endpoint (OPENAI_BASE_URL, OPENAI_API_KEY or a key file), or the built-in
// offline stand-in when no credentials are set or offline mode is forced;
// and the rate budget every model call of the processes sharing a store is
// kept within. New chooses and builds the model; the agent loop sees it as
// an agent.Model.
package model

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"google.golang.org/genai"

	"triage/internal/agent"
	"triage/internal/instructions"
	"triage/internal/trace"
)

// DefaultModel is the Gemini model used when none is given (the agent
// loop's own default).
const DefaultModel = agent.DefaultModelName

// Provider names the API a live model is reached through (Options.Provider;
// the provider setting).
type Provider string

// Providers (Options.Provider).
const (
	ProviderGemini Provider = "gemini" // the default and the reference
	ProviderOpenAI Provider = "openai" // any OpenAI-compatible Chat Completions endpoint
)

// Providers lists the provider names, default first, as the provider
// setting accepts them.
var Providers = []string{string(ProviderGemini), string(ProviderOpenAI)}

// Options choose the model.
type Options struct {
	// Offline forces the built-in offline model.
	Offline bool
	// Faults are injected into the offline model (tests, eval).
	Faults []Fault
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
	// model follows (see OfflineOptions.Scenarios).
	Scenarios *instructions.Scenarios
	// Provider is ProviderGemini ("" too) or ProviderOpenAI.
	Provider Provider
	// BaseURL (openai) is the endpoint's API root, e.g.
	// http://localhost:11434/v1; default $OPENAI_BASE_URL, else the OpenAI
	// API.
	BaseURL string
	// APIKeyFile (openai) holds the key when $OPENAI_API_KEY is unset.
	APIKeyFile string
	// Inputs (openai) are the kinds of attachment the endpoint reads
	// (InputKinds; default DefaultOpenAIInputs): the others are not sent.
	Inputs []string
	// MaxOutputTokens bounds every call's output (agent.Config; 0: the
	// agent's default).
	MaxOutputTokens int
	// ToolChoice is auto or required (agent.Config; "": auto).
	ToolChoice agent.ToolChoice
	// ContextCache (Gemini) serves the stable prefix of the loop's calls
	// (the system instruction, the declarations) from an explicit context
	// cache per scenario and instructions version, when it is at least the
	// model's minimum (agent.ContextCache); ContextCacheTTL is a cache's
	// lifetime, extended while in use (default agent.DefaultCacheTTL).
	ContextCache    bool
	ContextCacheTTL time.Duration
	// Logger receives what the context cache has to say (default: none).
	Logger *slog.Logger
}

// checkProvider returns an error naming p unless it is a known provider.
func checkProvider(p Provider) error {
	if p == "" || p == ProviderGemini || p == ProviderOpenAI {
		return nil
	}
	return fmt.Errorf("provider %q: want %s or %s", p, ProviderGemini, ProviderOpenAI)
}

// Live reports whether New would use a real model: the provider has
// credentials and offline mode is not forced. An OpenAI-compatible endpoint
// counts as configured with a key, or with a base URL alone (a local server
// such as Ollama needs none).
func (o Options) Live() bool {
	if o.Offline {
		return false
	}
	if o.Provider != ProviderOpenAI {
		return HasCredentials(o.Getenv)
	}
	getenv := o.getenv()
	return o.BaseURL != "" || getenv("OPENAI_BASE_URL") != "" || getenv("OPENAI_API_KEY") != "" || o.APIKeyFile != ""
}

func (o Options) getenv() func(string) string {
	if o.Getenv != nil {
		return o.Getenv
	}
	return os.Getenv
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
	Server *OfflineServer
	// Provider names the provider in traces (gen_ai.provider.name):
	// gcp.gemini, gcp.vertex_ai, openai, or triage.offline.
	Provider string
	// Reads reports whether the model is sent an attachment of a media
	// type; nil: every type the pipeline allows (Gemini).
	Reads func(mediaType string) bool
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
	if err := checkProvider(o.Provider); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if len(o.Faults) > 0 && o.Live() {
		return nil, errors.New("model: faults can only be injected into the offline model")
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: Transport(o.Concurrency)}
	}
	if o.Provider == ProviderOpenAI && !o.Offline {
		return openAIModel(o, hc) // chosen on purpose: no silent offline fallback
	}
	if o.Provider != ProviderOpenAI && o.Live() {
		c, err := geminiClient(ctx, hc, o.HTTPClient == nil)
		if err != nil {
			return nil, err
		}
		desc, provider := "Gemini API", trace.ProviderGemini
		if c.ClientConfig().Backend == genai.BackendVertexAI {
			desc, provider = "Gemini on Vertex AI", trace.ProviderVertexAI
		}
		if u := c.ClientConfig().HTTPOptions.BaseURL; u != "" {
			desc += " at " + u
		}
		g := &agent.Gemini{Client: c}
		if o.ContextCache {
			g.Cache = &agent.ContextCache{Client: c, TTL: o.ContextCacheTTL, Logger: o.Logger}
			desc += ", context cache"
		}
		return &Model{Model: g, Description: desc, Provider: provider}, nil
	}
	srv, err := StartOffline(OfflineOptions{Faults: o.Faults, Scenarios: o.Scenarios})
	if err != nil {
		return nil, fmt.Errorf("model: offline model: %w", err)
	}
	c, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:      "offline",
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  hc,
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL()},
	})
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("model: offline client: %w", err)
	}
	return &Model{
		Model:       &agent.Gemini{Client: c},
		Offline:     true,
		Provider:    trace.ProviderOffline,
		Description: "built-in offline model (deterministic stand-in, not an LLM)",
		Server:      srv,
	}, nil
}

// openAIModel builds the Chat Completions model: base URL from the
// options, else $OPENAI_BASE_URL; key from $OPENAI_API_KEY, else the key
// file.
func openAIModel(o Options, hc *http.Client) (*Model, error) {
	getenv := o.getenv()
	base := o.BaseURL
	if base == "" {
		base = getenv("OPENAI_BASE_URL")
	}
	key := getenv("OPENAI_API_KEY")
	if key == "" && o.APIKeyFile != "" {
		b, err := os.ReadFile(o.APIKeyFile)
		if err != nil {
			return nil, fmt.Errorf("model: OpenAI key file: %w", err)
		}
		if key = strings.TrimSpace(string(b)); key == "" {
			return nil, fmt.Errorf("model: OpenAI key file %s is empty", o.APIKeyFile)
		}
	}
	in, err := ParseInputs(o.Inputs)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	c, err := NewOpenAI(OpenAIConfig{BaseURL: base, APIKey: key, HTTPClient: hc, Inputs: &in})
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if key == "" && (base == "" || base == defaultOpenAIBaseURL) {
		return nil, errors.New("model: the OpenAI API needs a key: set OPENAI_API_KEY or a key file (a local server needs only its base URL)")
	}
	return &Model{Model: c, Description: "OpenAI-compatible endpoint " + c.URL(), Provider: trace.ProviderOpenAI, Reads: c.Reads}, nil
}

// Transport is the HTTP transport of the model client: http.DefaultTransport's
// settings (proxy from the environment, timeouts, HTTP/2), keeping an idle
// connection per concurrent call. http.DefaultTransport keeps 2 per host, so
// at a concurrency of 4 most calls paid a new TCP and TLS handshake.
func Transport(concurrency int) *http.Transport {
	concurrency = max(concurrency, 1)
	t := http.DefaultTransport.(*http.Transport).Clone()
	// Headroom for the verifier's calls and retries overlapping the loop.
	t.MaxIdleConnsPerHost = concurrency + 2
	t.MaxIdleConns = max(t.MaxIdleConns, 2*t.MaxIdleConnsPerHost)
	// Over HTTP/1.1 (a plain http:// endpoint: a local model server or
	// proxy) a request of 10 to 30 KB (instructions, tools, the
	// conversation so far) takes two or three writes through the default
	// 4 KB buffer and one through this one. HTTP/2 frames on its own.
	t.WriteBufferSize = 32 << 10
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
		return nil, fmt.Errorf("model: gemini client: %w", err)
	}
	got := c.ClientConfig()
	if !own || got.Backend != genai.BackendVertexAI || got.APIKey != "" || got.Credentials != nil {
		return c, nil
	}
	cc := &genai.ClientConfig{HTTPClient: hc}
	if err := cc.UseDefaultCredentials(); err != nil {
		return nil, fmt.Errorf("model: gemini client (Vertex AI): %w", err)
	}
	if qp, err := cc.Credentials.QuotaProjectID(ctx); err == nil && qp != "" {
		cc.HTTPOptions.Headers = http.Header{"X-Goog-User-Project": []string{qp}}
	}
	c, err = genai.NewClient(ctx, cc)
	if err != nil {
		return nil, fmt.Errorf("model: gemini client (Vertex AI): %w", err)
	}
	return c, nil
}
