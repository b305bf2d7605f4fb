package replies

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"triage"
)

// How runs sharing an outbox directory take turns: a lock for each send,
// and a claim on each email a run of process answers.

// LockFile is the empty file in an outbox directory whose flock makes a
// send one step across the processes writing to the directory.
const LockFile = ".lock"

// lockDir takes the flock of dir's LockFile, waiting while another process
// holds it (a send takes milliseconds) until ctx ends; unlock releases it.
func lockDir(ctx context.Context, dir string) (unlock func(), err error) {
	return lockFile(ctx, filepath.Join(dir, LockFile), "another process holds it")
}

// ClaimsDir is the directory of an outbox whose files' flocks hold the
// emails the runs sharing the outbox are answering (Claim).
const ClaimsDir = ".claims"

// Claim holds the email with Key key while this run answers it, from
// before it looks for an earlier reply until its own is written: another
// run sharing the outbox (an overlapping cron job) that claims the same
// Key waits, then finds the reply instead of asking the model again. The
// Keys share ClaimFiles lock files (created as they are first used), so
// once in a while an email waits for another one, never longer than that
// email takes; waiting ends with ctx. With c emails answered at once, an
// email meets another's file with odds of about c/ClaimFiles.
func (o *Outbox) Claim(ctx context.Context, key triage.Key) (release func(), err error) {
	dir := filepath.Join(o.dir, ClaimsDir)
	name, held := filepath.Join(dir, ClaimFile(key)), "another run is answering this email or one sharing its lock"
	release, err = lockFile(ctx, name, held)
	if errors.Is(err, fs.ErrNotExist) { // the first claim in this outbox
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("mail: outbox: %w", err)
		}
		release, err = lockFile(ctx, name, held)
	}
	if err != nil {
		return nil, fmt.Errorf("mail: outbox: %w", err)
	}
	return release, nil
}

// ClaimFiles is how many lock files the Keys share in ClaimsDir.
const ClaimFiles = 1 << 16

// ClaimFile is the name in ClaimsDir of the lock file that holds key: the
// first two bytes of its SHA-256 in hex, the same in every process.
func ClaimFile(key triage.Key) string {
	sum := sha256.Sum256([]byte(key))
	return fmt.Sprintf("%02x%02x", sum[0], sum[1])
}

// lockFile takes the flock of the file name (created when missing), waiting
// while it is held until ctx ends (the error then says held); unlock
// releases it.
func lockFile(ctx context.Context, name, held string) (unlock func(), err error) {
	// A plain descriptor: an os.File would register with the poller and be
	// switched to blocking mode for Fd, two more system calls each time.
	// Opening without O_CREAT first spares the directory's lock, which
	// creating (even an existing file) takes while other sends rename into
	// the directory.
	fd, err := syscall.Open(name, syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if errors.Is(err, syscall.ENOENT) {
		fd, err = syscall.Open(name, syscall.O_RDWR|syscall.O_CREAT|syscall.O_CLOEXEC, 0o644)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Close(fd) }, nil // closing releases the lock
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			syscall.Close(fd)
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
		select {
		case <-ctx.Done():
			syscall.Close(fd)
			return nil, fmt.Errorf("lock %s: %s: %w", name, held, context.Cause(ctx))
		case <-time.After(wait):
		}
	}
}
