// Package console is triage's web console for the people who supervise it:
// the queue of everything waiting for a person, each conversation with the
// agent's trajectory, per-scenario figures and the searchable ledger, and
// the actions a support lead takes (approve, edit or reject a draft, take a
// conversation over or give it back, add a note), each through the same
// ledger, ticket and mail code the CLI and the daemon use.
//
// Pages are rendered on the server with html/template (everything a
// customer wrote is escaped) and made lively with htmx, embedded: no
// JavaScript build step. Every request is authenticated (auth.go) and every
// action is protected against cross-site requests (http.CrossOriginProtection).
package console

import (
	"bytes"
	"cmp"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync"

	gomail "net/mail"
	"time"

	"triage/internal/clients/mail"
	"triage/internal/clients/tickets"
	"triage/internal/ledger"
	"triage/internal/model"
	"triage/internal/replies"
	"triage/internal/review"
)

//go:embed templates/*.html templates/parts/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Config configures New; Ledger and Token (or ProxyHeader) are required.
type Config struct {
	Ledger *ledger.Ledger
	// Tickets is the ticket store; nil hides tickets, notes and takeover.
	Tickets tickets.Conversations
	// Sender delivers approved drafts (the configured SMTP server or
	// outbox, as triage's own replies); nil refuses to send.
	Sender mail.Sender
	// From is the From of a person's reply (the configuration's
	// pipeline.from, as triage's replies), Domain the domain of its
	// Message-ID (default: From's); "" From refuses to send one.
	From, Domain string
	// Limits are the reply limits a person's reply passes, as triage's
	// (watch's limits).
	Limits replies.Limits
	// Sent looks replies up in the Sent folder (sentcheck.go); nil: the
	// console cannot check, and says so.
	Sent SentFinder
	// Autonomy is the bar the scenarios page judges each scenario's
	// readiness to send on its own by (the one watch decides by); the
	// zero Thresholds are review.DefaultThresholds.
	Autonomy review.Thresholds
	// Prices turn the tokens of the scenarios page into money (prices:);
	// nil shows tokens alone.
	Prices model.Prices

	// Token is the shared secret of Authorization: Bearer and of the login
	// form that starts a browser session. TokenFile, when Token is "",
	// holds it, and is read again whenever it changes: a replaced token
	// opens nothing and ends the sessions signed in with it.
	Token, TokenFile string
	// UsersFile names people and their tokens ("sha256:HEX NAME" lines,
	// credentials.go), read again whenever it changes: a person signs in
	// with their own token and is recorded by the file's name.
	UsersFile string
	// ProxyHeader names the header an authenticating reverse proxy (e.g.
	// oauth2-proxy's X-Forwarded-Email) sets to the signed-in person; it is
	// believed only from TrustedProxies. "" ignores every such header.
	ProxyHeader    string
	TrustedProxies []netip.Prefix // default: loopback
	// SecureCookie marks the session cookie Secure (the console is served
	// over HTTPS, e.g. behind a proxy).
	SecureCookie bool
	SessionTTL   time.Duration // default 12h

	Logger *slog.Logger
	Now    func() time.Time
}

// Server is the console; it is an http.Handler.
type Server struct {
	cfg     Config
	review  *review.Store // the draft review on the ledger's store
	log     *slog.Logger
	pages   map[string]*template.Template
	handler http.Handler

	creds    *credentials
	throttle *throttle
	maxQueue int // MaxQueue (tests lower it)

	mu       sync.Mutex
	sessions map[string]session
}

// New checks cfg and builds the console.
func New(cfg Config) (*Server, error) {
	if cfg.Ledger == nil {
		return nil, errors.New("console: Ledger is required")
	}
	if cfg.Token == "" && cfg.TokenFile == "" && cfg.UsersFile == "" && cfg.ProxyHeader == "" {
		return nil, errors.New("console: a token, a token file, a users file or a proxy header is required: every request is authenticated")
	}
	if cfg.Token != "" && len(cfg.Token) < MinTokenLength {
		return nil, fmt.Errorf("console: the token is %d characters; use at least %d (e.g. openssl rand -hex 32)", len(cfg.Token), MinTokenLength)
	}
	if len(cfg.TrustedProxies) == 0 {
		cfg.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Domain == "" {
		if a, err := gomail.ParseAddress(cfg.From); err == nil {
			_, cfg.Domain, _ = strings.Cut(a.Address, "@")
		}
	}
	if cfg.Autonomy == (review.Thresholds{}) {
		cfg.Autonomy = review.DefaultThresholds
	}
	if err := cfg.Autonomy.Check(); err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	creds, err := newCredentials(cfg)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, review: review.Of(cfg.Ledger), log: cfg.Logger, sessions: map[string]session{}, creds: creds, throttle: newThrottle(cfg.Now), maxQueue: MaxQueue}
	if s.pages, err = parsePages(cfg.Now); err != nil {
		return nil, err
	}
	s.handler = s.routes()
	return s, nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// routes: pages are GET, actions POST; everything passes the headers,
// the cross-origin check and the authentication, in that order.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(staticFS, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /login", s.loginPage)
	mux.HandleFunc("POST /login", s.login)
	mux.HandleFunc("POST /logout", s.logout)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/queue", http.StatusSeeOther) })
	mux.HandleFunc("GET /queue", s.queue)
	mux.HandleFunc("POST /queue", s.queue)
	mux.HandleFunc("GET /conversation/{ref}", s.conversation)
	mux.HandleFunc("GET /scenarios", s.scenarios)
	mux.HandleFunc("GET /activity", s.activity)
	mux.HandleFunc("POST /activity", s.activity)
	mux.HandleFunc("POST /conversation/{ref}/approve", s.approve)
	mux.HandleFunc("POST /conversation/{ref}/send", s.sendEdited)
	mux.HandleFunc("POST /conversation/{ref}/reject", s.reject)
	mux.HandleFunc("POST /conversation/{ref}/takeover", s.takeover)
	mux.HandleFunc("POST /conversation/{ref}/release", s.release)
	mux.HandleFunc("POST /conversation/{ref}/note", s.note)
	mux.HandleFunc("POST /conversation/{ref}/assign", s.assign)
	mux.HandleFunc("POST /conversation/{ref}/retry", s.retry)
	mux.HandleFunc("POST /conversation/{ref}/resolve", s.closeEmail(ledger.ActionResolved))
	mux.HandleFunc("POST /conversation/{ref}/dismiss", s.closeEmail(ledger.ActionDismissed))
	mux.HandleFunc("POST /conversation/{ref}/reopen", s.reopen)
	mux.HandleFunc("POST /conversation/{ref}/compose", s.compose)
	mux.HandleFunc("POST /conversation/{ref}/checksent", s.checkSentAction)

	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.log.Warn("console: cross-origin request refused", "method", r.Method, "path", r.URL.Path)
		http.Error(w, "cross-origin request refused", http.StatusForbidden)
	}))
	return s.headers(cop.Handler(s.authenticate(mux)))
}

// headers sets what every answer carries: a strict Content-Security-Policy
// (only our own script and style; nothing inline), no caching, no framing,
// no referrer; and logs the request without its query (a search may hold a
// customer's address).
func (s *Server) headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		if !strings.HasPrefix(r.URL.Path, "/static/") {
			h.Set("Cache-Control", "no-store")
		}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		start := s.cfg.Now()
		next.ServeHTTP(rec, r)
		s.log.Debug("console request", "method", r.Method, "route", routeOf(r), "status", rec.status, "duration", s.cfg.Now().Sub(start))
	})
}

// routeOf names the request without anything a customer wrote: the route
// pattern when one matched (refs are hashes), else the path's first part.
func routeOf(r *http.Request) string {
	if r.Pattern != "" {
		return r.Pattern
	}
	first, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	return r.Method + " /" + first
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// render executes page with data into a buffer first, so a template error
// is a clean 500, not half a page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, page string, data any) {
	t, ok := s.pages[page]
	if !ok {
		s.fail(w, r, fmt.Errorf("console: no page %q", page))
		return
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", view{User: userOf(r), Page: page, Data: data, Tickets: s.cfg.Tickets != nil}); err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// view is what every page template gets.
type view struct {
	User    string
	Page    string
	Tickets bool // a ticket store is configured
	Data    any
}

// fail answers 500 and logs the error (errors name rows by key hash, never
// by a customer's words).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	s.log.Error("console: request failed", "route", routeOf(r), "err", err)
	http.Error(w, "internal error; see the console log", http.StatusInternalServerError)
}

func parsePages(now func() time.Time) (map[string]*template.Template, error) {
	funcs := template.FuncMap{
		"stamp": func(t time.Time) string {
			if t.IsZero() {
				return "-"
			}
			return t.UTC().Format("2006-01-02 15:04")
		},
		"age": func(t time.Time) string { return ageString(now().Sub(t)) },
		// left is the time left to answer a complaint, or how long it is
		// overdue; overdue says whether it is.
		"left": func(c *ledger.Complaint) string {
			if d := c.Left(now()); d > 0 {
				return ageString(d) + " left"
			}
			return "overdue " + ageString(-c.Left(now()))
		},
		"overdue": func(c *ledger.Complaint) bool { return c.Left(now()) <= 0 },
		"pct":     func(f float64) string { return fmt.Sprintf("%.0f%%", f*100) },
		"money":   func(f float64) string { return fmt.Sprintf("%.4f", f) },
		"bars":    func(n int) int { return n * 8 },
		"last":    func(n int) int { return n - 1 },
	}
	funcs["reasonWords"] = func(r ledger.CloseReason) string { return reasonWords[r] }
	funcs["retryable"] = ledger.Retryable
	funcs["words"] = words
	funcs["replyLabel"] = replyLabel
	funcs["actionWords"] = func(a ledger.Action) string { return cmp.Or(actionWords[a], string(a)) }
	funcs["whyWords"] = func(w string) string { return cmp.Or(whyWords[w], w) }
	funcs["closeChoices"] = func() []reasonChoice { return closeChoices }
	funcs["rejectChoices"] = func() []reasonChoice { return rejectChoices }
	layout, err := template.New("").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts/*.html")
	if err != nil {
		return nil, fmt.Errorf("console: templates: %w", err)
	}
	pages := map[string]*template.Template{}
	for _, p := range []string{"queue", "conversation", "scenarios", "activity", "login", "message"} {
		t, err := template.Must(layout.Clone()).ParseFS(templateFS, "templates/"+p+".html")
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", p, err)
		}
		pages[p] = t
	}
	return pages, nil
}

func ageString(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// message answers with a short page saying what happened (an action that
// could not be done, a missing conversation).
func (s *Server) message(w http.ResponseWriter, r *http.Request, status int, title, text, back string) {
	s.render(w, r, status, "message", struct{ Title, Text, Back string }{title, text, back})
}
