package console

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The console's credentials: the shared token (Config.Token, or the
// token file) and the named people of the users file. Both files are read
// again whenever they change on disk (checked at every request: one stat
// each), so a rewritten file takes effect at once: a token no longer in
// it opens nothing, and the sessions signed in with it end.
//
// The users file holds one person a line, "sha256:HEX NAME": the SHA-256
// of the person's token and the name the console records for them. A
// token is not a password: it is at least 128 random bits a machine made
// (openssl rand -hex 32), so its hash cannot be turned back by guessing,
// and a slow password hash (bcrypt, argon2) would only add tens of
// milliseconds of CPU to every request a script makes with the token, for
// no protection the token's randomness does not already give.

// MaxUsers bounds the people a users file may name.
const MaxUsers = 1000

// maxCredentialFile bounds a token or users file.
const maxCredentialFile = 256 << 10

// credential is who a presented token belongs to: a person of the users
// file, or the shared token (user "", the name typed at sign-in counts).
type credential struct {
	user string
	hash string // hex SHA-256 of the token: what a session remembers
}

// fileStamp tells a file's versions apart.
type fileStamp struct {
	mod  time.Time
	size int64
	ino  uint64
}

func stampOf(fi os.FileInfo) fileStamp {
	st := fileStamp{mod: fi.ModTime(), size: fi.Size()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = sys.Ino
	}
	return st
}

// credentials holds the tokens in force.
type credentials struct {
	static         string // Config.Token: wins over the token file
	tokenFile      string
	usersFile      string
	log            *slog.Logger
	mu             sync.Mutex
	tokenStamp     fileStamp
	token          string // the token in force ("" none)
	usersStamp     fileStamp
	users          map[string]string // token hash -> name
	tokenErr, uErr string            // the last error logged, to log a change once
}

func tokenHash(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

// newCredentials reads the files once: an unreadable or malformed file is
// an error at start.
func newCredentials(cfg Config) (*credentials, error) {
	c := &credentials{static: cfg.Token, tokenFile: cfg.TokenFile, usersFile: cfg.UsersFile, log: cfg.Logger}
	if c.static == "" && c.tokenFile != "" {
		tok, st, err := readTokenFile(c.tokenFile)
		if err != nil {
			return nil, err
		}
		c.token, c.tokenStamp = tok, st
	}
	if c.usersFile != "" {
		users, st, err := readUsersFile(c.usersFile)
		if err != nil {
			return nil, err
		}
		c.users, c.usersStamp = users, st
	}
	return c, nil
}

func readTokenFile(path string) (string, fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fileStamp{}, fmt.Errorf("console: token file: %w", err)
	}
	b, err := readBounded(path)
	if err != nil {
		return "", fileStamp{}, fmt.Errorf("console: token file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < MinTokenLength {
		return "", fileStamp{}, fmt.Errorf("console: token file %s: the token is %d characters; use at least %d (e.g. openssl rand -hex 32)", path, len(tok), MinTokenLength)
	}
	return tok, stampOf(fi), nil
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCredentialFile+1))
	if err == nil && len(b) > maxCredentialFile {
		err = fmt.Errorf("%s is larger than %d bytes", path, maxCredentialFile)
	}
	return b, err
}

// readUsersFile reads "sha256:HEX NAME" lines; blank lines and lines
// starting with # are skipped. Errors name the line.
func readUsersFile(path string) (map[string]string, fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fileStamp{}, fmt.Errorf("console: users file: %w", err)
	}
	b, err := readBounded(path)
	if err != nil {
		return nil, fileStamp{}, fmt.Errorf("console: users file: %w", err)
	}
	users, err := ParseUsers(b)
	if err != nil {
		return nil, fileStamp{}, fmt.Errorf("console: users file %s: %w", path, err)
	}
	return users, stampOf(fi), nil
}

// ParseUsers reads a users file's text: token hash -> name.
func ParseUsers(b []byte) (map[string]string, error) {
	users := map[string]string{}
	names := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		h, name, _ := strings.Cut(line, " ")
		name = clipName(name)
		hexs, ok := strings.CutPrefix(h, "sha256:")
		if d, err := hex.DecodeString(hexs); !ok || err != nil || len(d) != sha256.Size {
			return nil, fmt.Errorf("line %d: want \"sha256:HEX NAME\" (the SHA-256 of the person's token in 64 hex digits, then their name)", n)
		}
		hexs = strings.ToLower(hexs)
		switch {
		case name == "":
			return nil, fmt.Errorf("line %d: no name after the hash", n)
		case names[strings.ToLower(name)]:
			return nil, fmt.Errorf("line %d: %q is named twice", n, name)
		case users[hexs] != "":
			return nil, fmt.Errorf("line %d: the token of %q is %q's too", n, name, users[hexs])
		case len(users) >= MaxUsers:
			return nil, fmt.Errorf("line %d: more than %d people", n, MaxUsers)
		}
		users[hexs], names[strings.ToLower(name)] = name, true
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return users, nil
}

// refresh reads a file again when it changed; the caller holds mu. A file
// that cannot be read any more opens nothing (its tokens are revoked) until
// it can; the error is logged once.
func (c *credentials) refresh() {
	if c.static == "" && c.tokenFile != "" {
		if fi, err := os.Stat(c.tokenFile); err != nil || stampOf(fi) != c.tokenStamp {
			tok, st, err := readTokenFile(c.tokenFile)
			c.token, c.tokenStamp = tok, st
			c.tokenErr = c.logChange(c.tokenErr, err, "console: token file read again")
		}
	}
	if c.usersFile != "" {
		if fi, err := os.Stat(c.usersFile); err != nil || stampOf(fi) != c.usersStamp {
			users, st, err := readUsersFile(c.usersFile)
			c.users, c.usersStamp = users, st
			c.uErr = c.logChange(c.uErr, err, "console: users file read again")
		}
	}
}

func (c *credentials) logChange(last string, err error, ok string) string {
	switch {
	case err != nil && err.Error() != last:
		c.log.Error("console: credentials file unusable; its tokens open nothing until it is fixed", "err", err)
		return err.Error()
	case err == nil:
		c.log.Info(ok, "people", len(c.users))
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// check returns whose token tok is.
func (c *credentials) check(tok string) (credential, bool) {
	if tok == "" {
		return credential{}, false
	}
	h := tokenHash(tok)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refresh()
	if name, ok := c.users[h]; ok {
		return credential{user: name, hash: h}, true
	}
	shared := c.static
	if shared == "" {
		shared = c.token
	}
	if shared != "" {
		a, b := sha256.Sum256([]byte(tok)), sha256.Sum256([]byte(shared))
		if subtle.ConstantTimeCompare(a[:], b[:]) == 1 {
			return credential{hash: h}, true
		}
	}
	return credential{}, false
}

// current reports whether the token whose hash a session remembers is
// still in force, and the name it now carries ("" for the shared token).
func (c *credentials) current(hash string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refresh()
	if name, ok := c.users[hash]; ok {
		return name, true
	}
	shared := c.static
	if shared == "" {
		shared = c.token
	}
	return "", shared != "" && tokenHash(shared) == hash
}

// names lists the people of the users file, sorted ("assign to").
func (c *credentials) names() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refresh()
	out := make([]string, 0, len(c.users))
	for _, n := range c.users {
		out = append(out, n)
	}
	return out
}
