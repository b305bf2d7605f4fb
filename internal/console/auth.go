package console

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"net/netip"
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
	user    string
	expires time.Time
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
		user, ok := s.identify(r)
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
// trusted proxy), the bearer token, the session cookie.
func (s *Server) identify(r *http.Request) (string, bool) {
	if s.cfg.ProxyHeader != "" {
		if v := strings.TrimSpace(r.Header.Get(s.cfg.ProxyHeader)); v != "" && s.fromTrustedProxy(r) {
			return clipName(v), true
		}
	}
	if auth := r.Header.Get("Authorization"); auth != "" {
		scheme, tok, _ := strings.Cut(auth, " ")
		if strings.EqualFold(scheme, "Bearer") && s.tokenOK(strings.TrimSpace(tok)) {
			return "token", true
		}
		return "", false
	}
	if c, err := r.Cookie(SessionCookie); err == nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		id := sessionID(c.Value)
		se, ok := s.sessions[id]
		if ok && s.cfg.Now().Before(se.expires) {
			return se.user, true
		}
		delete(s.sessions, id)
	}
	return "", false
}

func (s *Server) tokenOK(tok string) bool {
	if s.cfg.Token == "" || tok == "" {
		return false
	}
	a, b := sha256.Sum256([]byte(tok)), sha256.Sum256([]byte(s.cfg.Token))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
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
	if !s.tokenOK(r.PostFormValue("token")) {
		s.log.Warn("console: login refused: wrong token")
		s.render(w, r, http.StatusUnauthorized, "login", struct{ Error string }{"That is not the console token."})
		return
	}
	name := clipName(r.PostFormValue("name"))
	if name == "" {
		name = "console"
	}
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
	s.sessions[sessionID(value)] = session{user: name, expires: now.Add(s.cfg.SessionTTL)}
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
