package mailauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// DefaultEarlyExpiry is how long before its expiry a cached access token is
// replaced: a (re)connect never presents a token about to run out.
const DefaultEarlyExpiry = 2 * time.Minute

// DefaultHTTPTimeout bounds one request to the token endpoint.
const DefaultHTTPTimeout = 30 * time.Second

// Options are what New takes beyond the configuration; all are optional.
type Options struct {
	// Name is the configuration key of the block, e.g. "imap.oauth2"; it
	// prefixes errors (default "oauth2").
	Name string
	// Getenv reads SecretEnv (default os.Getenv).
	Getenv func(string) string
	// HTTPClient talks to the token endpoint (default: a client with
	// DefaultHTTPTimeout).
	HTTPClient *http.Client
	// EarlyExpiry: see DefaultEarlyExpiry.
	EarlyExpiry time.Duration
	Logger      *slog.Logger
}

// Token is an access token as a login uses it.
type Token struct {
	AccessToken string
	Expiry      time.Time // zero when unknown (a static token)
	// Fresh: obtained from the token endpoint by this call, not the cache.
	// A static token counts as fresh: there is no newer one to try.
	Fresh bool
	// Mechanism is the SASL mechanism Login used ("XOAUTH2", "OAUTHBEARER").
	Mechanism string
}

// Source hands out access tokens: cached until shortly before they expire
// (oauth2.ReuseTokenSourceWithExpiry), then obtained anew. A refresh token
// the endpoint rotates is written back to RefreshTokenFile. It is safe for
// concurrent use (IMAP reconnects and SMTP dials share one Source), and
// processes that share the file (triage watch and triage console) share
// the refresh token safely: every refresh reads the file under its lock
// (rotate.go), so none presents a refresh token another has rotated away.
type Source struct {
	name, tokenURL, grant, mech string
	refreshFile                 string
	early                       time.Duration
	onToken                     func(time.Time)
	log                         *slog.Logger

	base   oauth2.TokenSource // fetches a new token on every call
	static string             // a fixed token (Static)
	oc     *oauth2.Config     // the refresh-token grant's client
	ctx    context.Context    // carries the HTTP client

	mu      sync.Mutex
	reuse   oauth2.TokenSource
	last    *oauth2.Token
	refresh string // the refresh token in refreshFile
}

// New reads the client secret (SecretEnv, else ClientSecretFile) and, for
// the refresh-token grant, the refresh token; it contacts nothing. Errors
// name the key under Options.Name.
func New(cfg Config, o Options) (*Source, error) {
	if o.Name == "" {
		o.Name = "oauth2"
	}
	if errs := cfg.Check(o.Name); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: DefaultHTTPTimeout}
	}
	if o.EarlyExpiry <= 0 {
		o.EarlyExpiry = DefaultEarlyExpiry
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	secret := o.Getenv(SecretEnv)
	if secret == "" {
		if cfg.ClientSecretFile == "" {
			return nil, fmt.Errorf("%s.client_secret_file: missing (or set %s in the environment)", o.Name, SecretEnv)
		}
		var err error
		if secret, err = readSecret(cfg.ClientSecretFile); err != nil {
			return nil, fmt.Errorf("%s.client_secret_file: %v", o.Name, err)
		}
	}
	s := &Source{
		name: o.Name, tokenURL: cfg.TokenURL, grant: cfg.Grant(), mech: strings.ToLower(cfg.Mechanism),
		refreshFile: cfg.RefreshTokenFile, early: o.EarlyExpiry, log: o.Logger,
	}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, o.HTTPClient)
	if cfg.RefreshTokenFile == "" {
		cc := &clientcredentials.Config{ClientID: cfg.ClientID, ClientSecret: secret, TokenURL: cfg.TokenURL, Scopes: cfg.Scopes}
		s.base = cc.TokenSource(ctx)
	} else {
		rt, err := readSecret(cfg.RefreshTokenFile)
		if err != nil {
			return nil, fmt.Errorf("%s.refresh_token_file: %v", o.Name, err)
		}
		if err := checkWritableDir(filepath.Dir(cfg.RefreshTokenFile)); err != nil {
			return nil, fmt.Errorf("%s.refresh_token_file: %v (a rotated refresh token is written back there)", o.Name, err)
		}
		s.oc = &oauth2.Config{ClientID: cfg.ClientID, ClientSecret: secret, Endpoint: oauth2.Endpoint{TokenURL: cfg.TokenURL}, Scopes: cfg.Scopes}
		s.refresh, s.ctx = rt, ctx
		s.base = rotating{s}
	}
	s.reset()
	return s, nil
}

// Static is a Source of one fixed access token (TRIAGE_IMAP_TOKEN,
// token_file): never renewed. mechanism is as Config.Mechanism ("": what
// the server advertises).
func Static(token, mechanism string) *Source {
	return &Source{name: "token", static: token, grant: "static token", mech: strings.ToLower(mechanism), log: slog.New(slog.DiscardHandler)}
}

// reset drops the cached token; the caller holds mu (or owns s).
func (s *Source) reset() {
	// A non-nil empty token makes ReuseTokenSourceWithExpiry unwrap the
	// library's own cache around base instead of reusing its token.
	s.reuse = oauth2.ReuseTokenSourceWithExpiry(&oauth2.Token{}, s.base, s.early)
	s.last = nil
}

// Observe sets where s logs (refreshes, rotations, a rotated token that
// could not be saved) and a function called with the expiry of every
// access token obtained from the endpoint (the
// triage_oauth2_token_expiry_seconds metric); either may be nil.
func (s *Source) Observe(log *slog.Logger, onToken func(expiry time.Time)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if log != nil {
		s.log = log
	}
	s.onToken = onToken
}

// logger is the logger Observe set.
func (s *Source) logger() *slog.Logger {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log
}

// Grant names the grant ("client credentials", "refresh token", "static
// token").
func (s *Source) Grant() string { return s.grant }

// TokenURL is the token endpoint ("" for a static token).
func (s *Source) TokenURL() string { return s.tokenURL }

// Token returns an access token valid for at least the early-expiry margin
// (when the endpoint says how long it lives): the cached one, or a new one.
func (s *Source) Token() (Token, error) {
	if s.static != "" {
		return Token{AccessToken: s.static, Fresh: true}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.reuse.Token()
	if err != nil {
		s.reset() // the next call asks the endpoint again
		return Token{}, &TokenError{Name: s.name, TokenURL: s.tokenURL, Grant: s.grant, Err: err}
	}
	fresh := t != s.last
	s.last = t
	if fresh {
		if s.onToken != nil && !t.Expiry.IsZero() {
			s.onToken(t.Expiry)
		}
		s.log.Debug("oauth2 access token obtained", "config", s.name, "grant", s.grant, "expires_in", time.Until(t.Expiry).Round(time.Second).String())
	}
	return Token{AccessToken: t.AccessToken, Expiry: t.Expiry, Fresh: fresh}, nil
}

// Invalidate drops the cached token, so that the next Token asks the
// endpoint: the server refused it, although it had not expired (revoked,
// or the server's clock is ahead).
func (s *Source) Invalidate() {
	if s.static != "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reset()
}

// TokenError is a token the endpoint did not give.
type TokenError struct {
	Name, TokenURL, Grant string
	Err                   error
}

func (e *TokenError) Error() string {
	msg := fmt.Sprintf("mailauth: %s: no access token from %s (%s grant): %v", e.Name, e.TokenURL, e.Grant, e.Err)
	var re *oauth2.RetrieveError
	if errors.As(e.Err, &re) {
		switch re.ErrorCode {
		case "invalid_grant":
			if e.Grant == "refresh token" {
				msg += "; the refresh token was revoked or has expired: obtain a new one (docs/watch.md) and write it to " + e.Name + ".refresh_token_file"
			} else {
				msg += "; check the scopes and that an administrator granted the application permissions"
			}
		case "invalid_client", "unauthorized_client":
			msg += "; check " + e.Name + ".client_id and the client secret (" + SecretEnv + " or " + e.Name + ".client_secret_file), and whether the secret has expired"
		case "invalid_scope":
			msg += "; check " + e.Name + ".scopes"
		}
	}
	return msg
}

func (e *TokenError) Unwrap() error { return e.Err }

// Permanent reports whether asking again cannot help: the endpoint refused
// the client or the grant (a 4xx answer). Network errors and 5xx answers
// are temporary.
func (e *TokenError) Permanent() bool {
	var re *oauth2.RetrieveError
	if errors.As(e.Err, &re) {
		return re.Response != nil && re.Response.StatusCode >= 400 && re.Response.StatusCode < 500 && re.Response.StatusCode != http.StatusTooManyRequests
	}
	var ne net.Error
	return !errors.As(e.Err, &ne) && !errors.Is(e.Err, context.DeadlineExceeded)
}

// IsPermanent reports whether err holds a permanent *TokenError.
func IsPermanent(err error) bool {
	var te *TokenError
	return errors.As(err, &te) && te.Permanent()
}

// readSecret reads a one-line secret file (trailing newline trimmed).
func readSecret(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", errors.Unwrap(err)
	}
	v := strings.TrimSpace(string(b))
	if v == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	return v, nil
}

// checkWritableDir reports whether a file can be created in dir.
func checkWritableDir(dir string) error {
	f, err := os.CreateTemp(dir, ".triage-write-check-*")
	if err != nil {
		return fmt.Errorf("directory %s is not writable: %v", dir, errors.Unwrap(err))
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
