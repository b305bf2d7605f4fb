package mailauth

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/oauth2"

	"triage/internal/atomicfile"
)

// rotating is the refresh-token grant's base token source. Every refresh
// holds the flock of RefreshTokenFile's lock file (RefreshTokenFile +
// ".lock"), reads the file (another process sharing it may have rotated
// the token since), asks the endpoint, and writes a rotated refresh token
// back before letting go: processes sharing the file take turns and each
// presents the newest refresh token. A refresh refused with invalid_grant
// is tried once more when the file changed meanwhile (written by hand, or
// by a process that does not take the lock).
type rotating struct{ s *Source }

// Token is called by the Source's cache with s.mu held.
func (r rotating) Token() (*oauth2.Token, error) {
	s := r.s
	unlock, err := lockFile(s.refreshFile + ".lock")
	if err != nil {
		return nil, fmt.Errorf("%s.refresh_token_file: lock: %w", s.name, err)
	}
	defer unlock()
	s.reread()
	t, err := s.oc.TokenSource(s.ctx, &oauth2.Token{RefreshToken: s.refresh}).Token()
	var re *oauth2.RetrieveError
	if err != nil && errors.As(err, &re) && re.ErrorCode == "invalid_grant" && s.reread() {
		t, err = s.oc.TokenSource(s.ctx, &oauth2.Token{RefreshToken: s.refresh}).Token()
	}
	if err != nil {
		return nil, err
	}
	if t.RefreshToken != "" && t.RefreshToken != s.refresh {
		if err := atomicfile.Write(s.refreshFile, []byte(t.RefreshToken+"\n"), 0o600); err != nil {
			// The new refresh token works in memory; after a restart the
			// old one in the file may be refused.
			s.log.Error("oauth2: the token endpoint rotated the refresh token but it could not be saved; after a restart the old one may be refused",
				"config", s.name, "file", s.refreshFile, "err", err.Error())
		} else {
			s.log.Info("oauth2 refresh token rotated and saved", "config", s.name, "file", s.refreshFile)
		}
		s.refresh = t.RefreshToken
	}
	return t, nil
}

// reread takes the refresh token from the file when it differs from the
// one in memory, and reports whether it did. An unreadable file keeps the
// one in memory.
func (s *Source) reread() bool {
	rt, err := readSecret(s.refreshFile)
	if err != nil || rt == s.refresh {
		return false
	}
	s.log.Info("oauth2 refresh token read again from its file (another process rotated it)", "config", s.name, "file", s.refreshFile)
	s.refresh = rt
	return true
}

// lockFile takes the exclusive flock of path (created 0600 when missing),
// waiting while another process holds it; the holder's refresh is bounded
// by the HTTP client's timeout.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}
