package console

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"triage/internal/clip"
)

// MinTokenLength is the shortest console token New accepts.
const MinTokenLength = 16

// SessionCookie is the browser session cookie's name.
const SessionCookie = "triage_console"

// maxNameBytes bounds the name a person gives at login (it becomes the
// owner of their takeovers and the author of their notes).
const maxNameBytes = 100

// session is a browser signed in with the token.
type session struct {
	user    string // the name typed at sign-in (shared token)
	expires time.Time
	cred    string // the hash of the token signed in with
}

type userKey struct{}

// userOf is the person making the request (set by authenticate).
func userOf(r *http.Request) string {
	u, _ := r.Context().Value(userKey{}).(string)
	return u
}

// authenticate lets a request through when it carries the token
// (Authorization: Bearer), a live session cookie, or, when configured, the
// proxy's header from a trusted proxy address. The login page and the
// static files are open; any other request without credentials gets 401
// (a browser's page request is sent to the login page instead).
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/static/") || r.URL.Path == "/login" {
			next.ServeHTTP(w, r)
			return
		}
		user, ok, throttled := s.identify(r)
		if throttled {
			w.Header().Set("Retry-After", strconv.Itoa(int(FailureEvery.Seconds())))
			http.Error(w, "too many wrong tokens from this address; try again later", http.StatusTooManyRequests)
			return
		}
		if !ok {
			if r.Method == http.MethodGet && r.Header.Get("Authorization") == "" {
				http.Redirect(w, r, "/login", http.StatusSeeOther)
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="triage console"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, user)))
	})
}

// identify returns who sent r, in order: the proxy header (only from a
// trusted proxy), the bearer token, the session cookie (while the token it
// was signed in with is in force). throttled: the address of r has
// presented too many wrong tokens (throttle.go).
func (s *Server) identify(r *http.Request) (user string, ok, throttled bool) {
	if s.cfg.ProxyHeader != "" {
		if v := strings.TrimSpace(r.Header.Get(s.cfg.ProxyHeader)); v != "" && s.fromTrustedProxy(r) {
			return clipName(v), true, false
		}
	}
	if auth := r.Header.Get("Authorization"); auth != "" {
		if s.throttle.blocked(r) {
			return "", false, true
		}
		scheme, tok, _ := strings.Cut(auth, " ")
		if strings.EqualFold(scheme, "Bearer") {
			if c, ok := s.creds.check(strings.TrimSpace(tok)); ok {
				return cmp.Or(c.user, "token"), true, false
			}
		}
		s.throttle.failed(r)
		return "", false, false
	}
	if c, err := r.Cookie(SessionCookie); err == nil {
		s.mu.Lock()
		id := sessionID(c.Value)
		se, ok := s.sessions[id]
		s.mu.Unlock()
		if ok && s.cfg.Now().Before(se.expires) {
			if name, live := s.creds.current(se.cred); live {
				return cmp.Or(name, se.user), true, false
			}
		}
		s.mu.Lock()
		delete(s.sessions, id)
		s.mu.Unlock()
	}
	return "", false, false
}

func (s *Server) fromTrustedProxy(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// sessionID is what the server keeps of a cookie value: its hash, so the
// session table holds nothing a cookie could be made from.
func sessionID(cookie string) string {
	sum := sha256.Sum256([]byte(cookie))
	return hex.EncodeToString(sum[:])
}

// clipName is the name a person gave as one line of valid UTF-8, at most
// maxNameBytes.
func clipName(s string) string {
	return clip.Bytes(strings.ToValidUTF8(strings.Join(strings.Fields(s), " "), ""), maxNameBytes, "")
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, "login", struct{ Error string }{})
}

// login starts a browser session for a person who typed the token: a
// random cookie, HttpOnly and SameSite=Strict, valid SessionTTL.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	if s.throttle.blocked(r) {
		s.log.Warn("console: login refused: too many wrong tokens from the address")
		w.Header().Set("Retry-After", strconv.Itoa(int(FailureEvery.Seconds())))
		s.render(w, r, http.StatusTooManyRequests, "login", struct{ Error string }{"Too many wrong tokens from your address: wait a minute and try again."})
		return
	}
	cred, ok := s.creds.check(strings.TrimSpace(r.PostFormValue("token")))
	if !ok {
		s.throttle.failed(r)
		s.log.Warn("console: login refused: wrong token")
		s.render(w, r, http.StatusUnauthorized, "login", struct{ Error string }{"That is not the console token."})
		return
	}
	// A person of the users file is who the file says; the shared token
	// is whoever the person says.
	name := cmp.Or(cred.user, clipName(r.PostFormValue("name")), "console")
	var b [32]byte
	rand.Read(b[:])
	value := hex.EncodeToString(b[:])
	now := s.cfg.Now()
	s.mu.Lock()
	for id, se := range s.sessions {
		if !now.Before(se.expires) {
			delete(s.sessions, id)
		}
	}
	s.sessions[sessionID(value)] = session{user: name, expires: now.Add(s.cfg.SessionTTL), cred: cred.hash}
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: s.cfg.SecureCookie, MaxAge: int(s.cfg.SessionTTL.Seconds()),
	})
	s.log.Info("console: signed in", "user", name)
	http.Redirect(w, r, "/queue", http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(SessionCookie); err == nil {
		s.mu.Lock()
		delete(s.sessions, sessionID(c.Value))
		s.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}
