// Package httpapi calls HTTP JSON APIs: a Tool runs a tool bound in
// tools.yaml to an HTTP endpoint, a Client is the JSON-over-HTTP helper the
// remote clients (warranty, tickets) share, and Secrets keeps configured
// secrets out of what either returns.
//
// A Tool's GET fills the URL's {placeholders} with the call's arguments (the rest go
// to the query string), POST sends them as a JSON body. It bounds every call
// (timeout, response size, redirects only within the same host) and turns a
// non-2xx answer into an error carrying the status.
//
// Secrets reach a tool only through ${VAR} in its URL or headers (expanded by
// the tools loader); they are never logged and never appear in an error:
// errors name the method, the host and the status, not the URL or headers.
package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Defaults and limits.
const (
	DefaultTimeout          = 10 * time.Second // a Tool's call, a Client's request
	DefaultMaxResponseBytes = 1 << 20
	maxRedirects            = 5
)

// ToolConfig configures a Tool; URL is required.
type ToolConfig struct {
	Name             string            // the tool's name, for logs and errors
	Method           string            // GET (default) or POST
	URL              string            // http(s) URL with {placeholders}; ${VAR} already expanded
	Headers          map[string]string // sent with every request (may hold secrets)
	Timeout          time.Duration     // whole call, body included; default DefaultTimeout
	MaxResponseBytes int64             // larger answers are an error; default DefaultMaxResponseBytes
	HTTPClient       *http.Client      // default: a new client; its redirect policy is replaced
	Logger           *slog.Logger
}

// Tool is one HTTP tool. It is safe for concurrent use.
type Tool struct {
	name     string
	method   string
	url      string
	host     string // scheme://host of URL, the only origin redirects may go to
	headers  http.Header
	secrets  []string // header values and URL credentials, redacted from errors
	timeout  time.Duration
	maxBytes int64
	client   *http.Client
	log      *slog.Logger
}

var placeholderRE = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// NewTool checks cfg and applies defaults.
func NewTool(cfg ToolConfig) (*Tool, error) {
	name := cfg.Name
	if name == "" {
		name = "http"
	}
	t := &Tool{
		name:     name,
		method:   strings.ToUpper(cfg.Method),
		url:      cfg.URL,
		timeout:  cfg.Timeout,
		maxBytes: cfg.MaxResponseBytes,
		headers:  http.Header{},
		log:      cfg.Logger,
	}
	switch t.method {
	case "":
		t.method = http.MethodGet
	case http.MethodGet, http.MethodPost:
	default:
		return nil, fmt.Errorf("httptool: tool %s: method %q: want GET or POST", name, cfg.Method)
	}
	// Parse with the placeholders replaced, so "{id}" does not upset url.Parse.
	u, err := url.Parse(placeholderRE.ReplaceAllString(cfg.URL, "x"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("httptool: tool %s: url: want an absolute http(s) URL", name)
	}
	t.host = u.Scheme + "://" + u.Host
	if u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			t.secrets = append(t.secrets, p)
		}
	}
	for _, vs := range u.Query() {
		for _, v := range vs {
			// A query value may be an API key; a short one ("page=1") is
			// not, and redacting it would blank every "1" of a message.
			if len(v) >= minQuerySecret {
				t.secrets = append(t.secrets, v)
			}
		}
	}
	for k, v := range cfg.Headers {
		if k == "" || strings.ContainsAny(k+v, "\r\n") {
			return nil, fmt.Errorf("httptool: tool %s: header %q: empty name or a line break", name, k)
		}
		t.headers.Set(k, v)
		if len(v) >= 4 {
			t.secrets = append(t.secrets, v)
			if _, tok, ok := strings.Cut(v, " "); ok && len(tok) >= 4 {
				t.secrets = append(t.secrets, tok) // "Bearer TOKEN": the token alone too
			}
		}
	}
	if t.timeout <= 0 {
		t.timeout = DefaultTimeout
	}
	if t.maxBytes <= 0 {
		t.maxBytes = DefaultMaxResponseBytes
	}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	base := cfg.HTTPClient
	if base == nil {
		base = &http.Client{}
	}
	c := *base
	c.CheckRedirect = t.checkRedirect
	t.client = &c
	return t, nil
}

// Placeholders returns the names of rawURL's {placeholders}, in order, each
// once: the arguments a call must give to fill it (instructions.Tools.Check holds
// them to the declared parameters).
func Placeholders(rawURL string) []string {
	var out []string
	for _, m := range placeholderRE.FindAllStringSubmatch(rawURL, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// checkRedirect follows at most maxRedirects redirects, all to the origin
// (scheme and host) of the configured URL.
func (t *Tool) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return &ToolError{msg: fmt.Sprintf("more than %d redirects", maxRedirects)}
	}
	if req.URL.Scheme+"://"+req.URL.Host != t.host {
		return &ToolError{msg: "redirect to another host (" + req.URL.Host + ") refused"}
	}
	return nil
}

// ToolError is a failed call of a Tool. Its message, "httptool: ...", names
// the tool, the method, the host and the status; never the URL, the headers
// or the arguments.
type ToolError struct {
	Status    int // HTTP status; 0 when no response came back
	msg       string
	temporary bool
}

func (e *ToolError) Error() string { return "httptool: " + e.msg }

// Temporary reports whether a retry may help: 429, 5xx, timeouts and
// transport failures.
func (e *ToolError) Temporary() bool { return e.temporary }

// ErrArgs marks a call whose arguments cannot fill the URL.
var ErrArgs = errors.New("httptool: bad arguments")

// EffectKey is the Idempotency-Key a tool with an effect sends: hex sha256
// of the inbound email's key, the function and its arguments (as JSON, keys
// sorted), first 32 characters. The same email processed again (a crash
// before its reply, a retry) sends the same key for the same call.
func EffectKey(emailKey, function string, args map[string]any) string {
	b, _ := json.Marshal(args)
	sum := sha256.Sum256([]byte(emailKey + "|" + function + "|" + string(b)))
	return hex.EncodeToString(sum[:])[:32]
}

// Call runs the tool with args and returns the JSON answer: an object as
// it is, anything else as {"value": ...}; an empty answer is {}.
func (t *Tool) Call(ctx context.Context, args map[string]any) (map[string]any, error) {
	return t.CallKey(ctx, args, "")
}

// CallKey is Call with an Idempotency-Key header (when key is not empty):
// a tool with an effect sends one derived from the email and the
// arguments, so that the service can tell a retry (the same email processed
// again after a crash, or a call that timed out) from a new request.
func (t *Tool) CallKey(ctx context.Context, args map[string]any, key string) (map[string]any, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	req, err := t.request(ctx, args)
	if err != nil {
		return nil, err
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		err = t.transportError(ctx, err)
		t.log.WarnContext(ctx, "httptool: call failed", "tool", t.name, "method", t.method, "host", req.URL.Host, "error", err)
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, t.maxBytes+1))
	t.log.InfoContext(ctx, "httptool: call", "tool", t.name, "method", t.method, "host", req.URL.Host,
		"status", resp.StatusCode, "bytes", len(body), "duration_ms", time.Since(start).Milliseconds())
	if err != nil {
		return nil, t.transportError(ctx, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &ToolError{
			Status:    resp.StatusCode,
			msg:       t.redact(fmt.Sprintf("tool %s: %s %s: %s: %s", t.name, t.method, req.URL.Host, resp.Status, Snippet(body))),
			temporary: resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500,
		}
	}
	if int64(len(body)) > t.maxBytes {
		return nil, &ToolError{Status: resp.StatusCode, msg: fmt.Sprintf("tool %s: response larger than %d bytes", t.name, t.maxBytes)}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return map[string]any{}, nil
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, &ToolError{Status: resp.StatusCode, msg: fmt.Sprintf("tool %s: response is not JSON: %v", t.name, err)}
	}
	// A server may echo a token back in a success too (a "whoami", a debug
	// echo): never let it reach the model, the outcome or a reply.
	v = Secrets(t.secrets).Value(v)
	if m, ok := v.(map[string]any); ok {
		return m, nil
	}
	return map[string]any{"value": v}, nil
}

// request builds the HTTP request for args.
func (t *Tool) request(ctx context.Context, args map[string]any) (*http.Request, error) {
	rest := maps.Clone(args)
	if rest == nil {
		rest = map[string]any{}
	}
	var missing []string
	var bad error
	fill := func(part string, inPath bool) string {
		return placeholderRE.ReplaceAllStringFunc(part, func(m string) string {
			name := m[1 : len(m)-1]
			v, ok := args[name]
			if !ok {
				missing = append(missing, name)
				return m
			}
			delete(rest, name)
			s, err := scalar(v)
			if err != nil && bad == nil {
				bad = fmt.Errorf("%w: tool %s: %s %v", ErrArgs, t.name, name, err)
			}
			// PathEscape leaves "." and ".." as they are: as a whole path
			// segment they would climb out of the configured path once
			// the service (or a proxy) cleans it.
			if inPath && (s == "" || s == "." || s == "..") && bad == nil {
				bad = fmt.Errorf("%w: tool %s: %s %q cannot fill a path segment", ErrArgs, t.name, name, s)
			}
			if inPath {
				return url.PathEscape(s)
			}
			return url.QueryEscape(s)
		})
	}
	// Path placeholders are path-escaped ("a/b" stays one segment), query
	// placeholders query-escaped.
	path, query, hasQuery := strings.Cut(t.url, "?")
	raw := fill(path, true)
	if hasQuery {
		raw += "?" + fill(query, false)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: tool %s: missing %s for the URL", ErrArgs, t.name, strings.Join(missing, ", "))
	}
	if bad != nil {
		return nil, bad
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: tool %s: the arguments do not make a valid URL", ErrArgs, t.name)
	}
	var body io.Reader
	if t.method == http.MethodGet {
		if len(rest) > 0 {
			q := u.Query()
			for _, k := range slices.Sorted(maps.Keys(rest)) {
				s, err := scalar(rest[k])
				if err != nil {
					return nil, fmt.Errorf("%w: tool %s: %s %v", ErrArgs, t.name, k, err)
				}
				q.Set(k, s)
			}
			u.RawQuery = q.Encode()
		}
	} else {
		b, err := json.Marshal(rest)
		if err != nil {
			return nil, fmt.Errorf("%w: tool %s: encode body: %v", ErrArgs, t.name, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, t.method, u.String(), body)
	if err != nil {
		return nil, &ToolError{msg: fmt.Sprintf("tool %s: build request failed", t.name)}
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, vs := range t.headers {
		req.Header[k] = vs
	}
	return req, nil
}

// transportError wraps a client failure without the URL that *url.Error
// would quote.
func (t *Tool) transportError(ctx context.Context, err error) error {
	var he *ToolError
	if errors.As(err, &he) { // refused by checkRedirect
		return &ToolError{msg: fmt.Sprintf("tool %s: %s", t.name, he.msg)}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return &ToolError{msg: fmt.Sprintf("tool %s: no answer within %s", t.name, t.timeout), temporary: true}
	case errors.Is(err, context.Canceled):
		return &ToolError{msg: fmt.Sprintf("tool %s: canceled", t.name)}
	}
	return &ToolError{msg: t.redact(fmt.Sprintf("tool %s: %s: %v", t.name, t.method, err)), temporary: true}
}

// minQuerySecret is the shortest query value treated as a secret.
const minQuerySecret = 8

// redact replaces every configured secret in s.
func (t *Tool) redact(s string) string {
	return Secrets(t.secrets).String(s)
}

// scalar formats a URL argument: strings as they are, numbers and booleans
// in their JSON form.
func scalar(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case bool:
		return strconv.FormatBool(v), nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case int:
		return strconv.Itoa(v), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case json.Number:
		return v.String(), nil
	case nil:
		return "", errors.New("is null")
	}
	return "", fmt.Errorf("is a %T, want a string, number or boolean", v)
}
