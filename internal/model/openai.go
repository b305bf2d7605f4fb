// The OpenAI-compatible provider: the agent's Model over a Chat
// Completions endpoint (OpenAI, Ollama, vLLM, llama.cpp server, LiteLLM).
// The rest of triage keeps speaking genai types: a request's contents,
// function declarations, tool config and response schema are converted to
// chat messages, tools and a response format, and the answer back to a
// GenerateContentResponse (tool calls become FunctionCall parts carrying
// the call's id; a refusal or a content filter becomes a SAFETY candidate).
// An HTTP error comes back as a genai.APIError, so the agent's retry policy
// (408, 429, 5xx, Retry-After) applies unchanged.

package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genai"

	"triage/internal/agent"
	"triage/internal/clients/httpapi"
)

// defaultOpenAIBaseURL is the OpenAI API.
const defaultOpenAIBaseURL = "https://api.openai.com/v1"

// maxChatAnswer bounds the body of one answer read from the endpoint.
const maxChatAnswer = 8 << 20

// OpenAIConfig configures an OpenAI client.
type OpenAIConfig struct {
	// BaseURL is the endpoint's API root, e.g. http://localhost:11434/v1
	// (Ollama); requests go to BaseURL + "/chat/completions". Default
	// the OpenAI API.
	BaseURL string
	// APIKey is sent as a bearer token; empty sends none (a local server).
	APIKey string
	// Inputs are the attachments the endpoint reads (default
	// DefaultOpenAIInputs).
	Inputs *Inputs
	// HTTPClient carries every request (default http.DefaultClient's
	// settings). Redirects are followed only within the base URL's scheme,
	// host and port, whatever its CheckRedirect says.
	HTTPClient *http.Client
}

// OpenAI is an agent.Model over Chat Completions; safe for concurrent use.
type OpenAI struct {
	url    string
	key    string
	hc     *http.Client
	inputs Inputs
}

var _ agent.Model = (*OpenAI)(nil)

// NewOpenAI checks cfg and applies defaults.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = defaultOpenAIBaseURL
	}
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, fmt.Errorf("openai: base URL %q: want http:// or https://", cfg.BaseURL)
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("openai: base URL %q: no host", cfg.BaseURL)
	}
	hc := &http.Client{}
	if cfg.HTTPClient != nil {
		*hc = *cfg.HTTPClient
	}
	origin := u.Scheme + "://" + u.Host
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		return sameOrigin(origin, req, via)
	}
	in := DefaultOpenAIInputs
	if cfg.Inputs != nil {
		in = *cfg.Inputs
	}
	return &OpenAI{url: base + "/chat/completions", key: cfg.APIKey, hc: hc, inputs: in}, nil
}

// Reads reports whether the endpoint is sent attachments of mediaType
// (OpenAIConfig.Inputs).
func (c *OpenAI) Reads(mediaType string) bool { return c.inputs.Reads(mediaType) }

// maxRedirects bounds the redirects one request follows.
const maxRedirects = 5

// sameOrigin follows a redirect only within origin (scheme, host and
// port): the API key rides on every request, and another port of the same
// host is another server.
func sameOrigin(origin string, req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("openai: more than %d redirects", maxRedirects)
	}
	if to := req.URL.Scheme + "://" + req.URL.Host; to != origin {
		return fmt.Errorf("openai: redirect to another origin (%s) refused", to)
	}
	return nil
}

// URL is where requests go.
func (c *OpenAI) URL() string { return c.url }

// GenerateContent sends one chat completion request and converts its answer.
func (c *OpenAI) GenerateContent(ctx context.Context, model string, contents []*genai.Content, config *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	req, err := chatRequestFor(model, contents, config, c.inputs)
	if err != nil {
		return nil, err
	}
	body, err := marshal(req)
	if err != nil {
		return nil, fmt.Errorf("openai: encode request: %w", err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if c.key != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.hc.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxChatAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("openai: read answer: %w", err)
	}
	if len(raw) > maxChatAnswer {
		return nil, fmt.Errorf("openai: answer over %d bytes", maxChatAnswer)
	}
	if resp.StatusCode/100 != 2 {
		return nil, apiError(resp, raw)
	}
	var cr chatResponse
	if err := json.Unmarshal(raw, &cr); err != nil {
		return nil, fmt.Errorf("openai: decode answer (HTTP %d): %w", resp.StatusCode, err)
	}
	return fromChat(&cr), nil
}

// apiError turns an error answer into a genai.APIError (its code is the
// HTTP status, so agent.Temporary classifies it), with the Retry-After
// header as a google.rpc.RetryInfo detail the agent's backoff honours.
func apiError(resp *http.Response, raw []byte) error {
	ae := genai.APIError{Code: resp.StatusCode, Status: http.StatusText(resp.StatusCode)}
	var er chatError
	if json.Unmarshal(raw, &er) == nil && er.Error.Message != "" {
		ae.Message = er.Error.Message
		if er.Error.Type != "" {
			ae.Status = er.Error.Type
		}
	} else {
		ae.Message = httpapi.Snippet(raw)
	}
	if d := retryAfter(resp.Header.Get("Retry-After")); d > 0 {
		ae.Details = []map[string]any{{
			"@type":      "type.googleapis.com/google.rpc.RetryInfo",
			"retryDelay": d.String(),
		}}
	}
	return ae
}

// retryAfter reads a Retry-After header in seconds (an HTTP date is
// ignored: the agent's own backoff applies).
func retryAfter(h string) time.Duration {
	n, err := strconv.ParseFloat(strings.TrimSpace(h), 64)
	if err != nil || n <= 0 || n > 3600 {
		return 0
	}
	return time.Duration(n * float64(time.Second))
}

// errUnsupported is returned for a request this provider cannot express
// (e.g. inline binary data in the contents).
var errUnsupported = errors.New("openai: unsupported request")
