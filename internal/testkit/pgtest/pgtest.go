// Package pgtest starts a real PostgreSQL server for tests: Debian's
// initdb and postgres on loopback, in a temporary directory, with a free
// port, once per test binary; every test gets a database of its own.
//
// A test package that uses it calls Main from its TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// and each test asks for a database with URL. Without PostgreSQL
// installed the test is skipped loudly (mailtest.Skip: under CI it fails).
// Run as root, the server runs as the unprivileged user nobody (PostgreSQL
// refuses to run as root), with the data directory owned by it.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"triage/internal/testkit/mailtest"
)

// BinEnv names a directory holding initdb and postgres, instead of the
// newest /usr/lib/postgresql/*/bin.
const BinEnv = "TRIAGE_PG_BIN"

var (
	mainCalled atomic.Bool
	once       sync.Once
	srv        *server
	startErr   error
	dbSeq      atomic.Int64
	drops      sync.WaitGroup
)

// errMissing is a start error meaning PostgreSQL is not installed.
var errMissing = errors.New("pgtest: PostgreSQL is not installed (Debian package postgresql; .ci/postgres.sh)")

// Main runs the tests and stops the server if a test started it. Call it
// from TestMain.
func Main(m *testing.M) int {
	mainCalled.Store(true)
	code := m.Run()
	drops.Wait()
	if srv != nil {
		srv.stop()
	}
	return code
}

// URL creates an empty database for t on the shared server (started on
// first use) and returns its URL; the database is dropped when t ends.
func URL(t testing.TB) string {
	t.Helper()
	if !mainCalled.Load() {
		t.Fatal("pgtest: the test package's TestMain must call pgtest.Main")
	}
	once.Do(func() { srv, startErr = start() })
	if errors.Is(startErr, errMissing) {
		mailtest.Skip(t, "%v", startErr)
	}
	if startErr != nil {
		t.Fatalf("pgtest: start PostgreSQL: %v", startErr)
	}
	name := fmt.Sprintf("test_%d", dbSeq.Add(1))
	if err := srv.admin(fmt.Sprintf(`CREATE DATABASE %s STRATEGY FILE_COPY`, name)); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	// Dropped in the background (Main waits for it): the next test need
	// not wait for the disk to be freed.
	t.Cleanup(func() {
		drops.Go(func() { srv.admin(fmt.Sprintf(`DROP DATABASE IF EXISTS %s WITH (FORCE)`, name)) })
	})
	return srv.url(name)
}

type server struct {
	dir  string
	port int
	cmd  *exec.Cmd
	done chan error // the server process's exit
	mu   sync.Mutex // one admin statement at a time
}

func (s *server) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

func (s *server) admin(stmt string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.url("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, stmt)
	return err
}

// binDir finds the directory of initdb and postgres.
func binDir() (string, error) {
	if d := os.Getenv(BinEnv); d != "" {
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errMissing
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode()&0o111 != 0
}

// credential is who the server runs as: nil (this process's user) unless
// this process is root, then nobody.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root and no unprivileged user to run PostgreSQL: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	// No supplementary groups: root's must not follow the server.
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func start() (*server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "triage-pgtest-")
	if err != nil {
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	initdb := command(cred, dir, filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres",
		"-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	var lastErr error
	for range 3 { // a port found free may be taken before postgres binds it
		s, err := run(cred, bin, dir, data)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	os.RemoveAll(dir)
	return nil, lastErr
}

func command(cred *syscall.Credential, dir, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	// The server dies with the test binary, even when it is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	return cmd
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func run(cred *syscall.Credential, bin, dir, data string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	log := &syncWriter{}
	cmd := command(cred, dir, filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port),
		"-k", dir, "-c", "listen_addresses=127.0.0.1",
		// A throwaway server: durability buys nothing and costs seconds.
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=300")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s := &server{dir: dir, port: port, cmd: cmd, done: make(chan error, 1)}
	go func() { s.done <- cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, s.url("postgres"))
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return s, nil
		}
		select {
		case werr := <-s.done:
			return nil, fmt.Errorf("postgres exited: %v\n%s", werr, lastLines(log.String()))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("postgres did not accept connections on port %d: %v\n%s", port, err, lastLines(log.String()))
		}
	}
}

// stop shuts the server down (fast shutdown) and removes its directory.
func (s *server) stop() {
	if s.cmd.Process != nil {
		s.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-s.done:
		case <-time.After(15 * time.Second):
			s.cmd.Process.Kill()
			<-s.done
		}
	}
	os.RemoveAll(s.dir)
}

func lastLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

// syncWriter serialises the server's stdout and stderr into one buffer.
type syncWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// Each runs f as two subtests, "sqlite" and "postgres", each with a fresh
// store target: the path of a SQLite file that does not exist yet, and
// the URL of an empty PostgreSQL database. It is how one store test suite
// covers both backends.
func Each(t *testing.T, f func(t *testing.T, target string)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { f(t, filepath.Join(t.TempDir(), "store.db")) })
	t.Run("postgres", func(t *testing.T) { f(t, URL(t)) })
}
