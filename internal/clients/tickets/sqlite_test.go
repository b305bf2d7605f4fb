package tickets

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage/internal/store"
	"triage/internal/testkit/pgtest"
)

func req(key string) Request {
	return Request{SerialNumber: "SN-1", CustomerEmail: "jan@example.org", Priority: "normal", Summary: "Reklamacja", IdempotencyKey: key}
}

func TestSQLiteCreate(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		path := target
		s, err := OpenSQLite(path)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		steps := []struct {
			key  string
			want Ticket
		}{
			{"k1", Ticket{TicketID: "TKT-000001", Status: StatusCreated}},
			{"k2", Ticket{TicketID: "TKT-000002", Status: StatusCreated}},
			{"k1", Ticket{TicketID: "TKT-000001", Status: StatusExisting}},
			{"k3", Ticket{TicketID: "TKT-000003", Status: StatusCreated}},
			{"k2", Ticket{TicketID: "TKT-000002", Status: StatusExisting}},
		}
		for i, st := range steps {
			got, err := s.Create(ctx, req(st.key))
			if err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			if diff := cmp.Diff(st.want, got); diff != "" {
				t.Errorf("step %d (%s) (-want +got):\n%s", i, st.key, diff)
			}
		}
		if _, err := s.Create(ctx, Request{}); !errors.Is(err, ErrNoKey) {
			t.Errorf("empty key: err = %v, want ErrNoKey", err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}

		// The store survives a reopen, with the stored fields.
		s, err = OpenSQLite(path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		got, err := s.Create(ctx, req("k3"))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(Ticket{TicketID: "TKT-000003", Status: StatusExisting}, got); diff != "" {
			t.Errorf("after reopen (-want +got):\n%s", diff)
		}
		var serial, email, prio, summary, mode string
		if err := s.db.QueryRowContext(ctx, `SELECT serial_number, customer_email, priority, summary FROM tickets WHERE idempotency_key='k1'`).Scan(&serial, &email, &prio, &summary); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"SN-1", "jan@example.org", "normal", "Reklamacja"}, []string{serial, email, prio, summary}); diff != "" {
			t.Errorf("stored row (-want +got):\n%s", diff)
		}
		if s.db.Dialect() == store.SQLite {
			if err := s.db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
				t.Errorf("journal_mode = %q, %v; want wal", mode, err)
			}
		}
	})
}

func TestOpenSQLiteErrors(t *testing.T) {
	if _, err := OpenSQLite(""); err == nil {
		t.Error("empty path accepted")
	}
	if _, err := OpenSQLite(filepath.Join(t.TempDir(), "missing-dir", "t.db")); err == nil {
		t.Error("path in a missing directory accepted")
	}
}

// TestSQLiteConcurrent creates tickets from many goroutines through two
// stores on one file: every key gets exactly one ID, IDs are dense.
func TestSQLiteConcurrent(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		path := target
		a, err := OpenSQLite(path)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		b, err := OpenSQLite(path)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()

		const keys, repeats = 20, 4
		type res struct {
			key string
			t   Ticket
		}
		out := make(chan res, keys*repeats*2)
		var wg sync.WaitGroup
		for _, s := range []*SQLite{a, b} {
			for k := range keys {
				for range repeats {
					wg.Add(1)
					go func() {
						defer wg.Done()
						key := fmt.Sprintf("key-%02d", k)
						tk, err := s.Create(context.Background(), req(key))
						if err != nil {
							t.Error(err)
							return
						}
						out <- res{key, tk}
					}()
				}
			}
		}
		wg.Wait()
		close(out)
		checkIDs(t, out2map(t, out, func(r res) (string, Ticket) { return r.key, r.t }), keys)
	})
}

func out2map[R any](t *testing.T, ch chan R, kv func(R) (string, Ticket)) map[string][]Ticket {
	m := map[string][]Ticket{}
	for r := range ch {
		k, tk := kv(r)
		m[k] = append(m[k], tk)
	}
	return m
}

// checkIDs: each key has one ID and one "created"; the IDs are 1..keys.
func checkIDs(t *testing.T, byKey map[string][]Ticket, keys int) {
	t.Helper()
	var ids []string
	for key, ts := range byKey {
		created := 0
		for _, tk := range ts {
			if tk.TicketID != ts[0].TicketID {
				t.Errorf("%s: two IDs %s and %s", key, ts[0].TicketID, tk.TicketID)
			}
			if tk.Status == StatusCreated {
				created++
			}
		}
		if created != 1 {
			t.Errorf("%s: created %d times", key, created)
		}
		ids = append(ids, ts[0].TicketID)
	}
	sort.Strings(ids)
	var want []string
	for i := 1; i <= keys; i++ {
		want = append(want, FormatID(int64(i)))
	}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("ticket IDs (-want +got):\n%s", diff)
	}
}

// TestSQLiteTwoProcesses runs this test binary a second time as a helper
// process that creates the same keys at the same time as this one; both
// start on a signal once the store is open on each side.
func TestSQLiteTwoProcesses(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		if testing.Short() {
			t.Skip("spawns a process")
		}
		path := target
		const keys = 200
		s, err := OpenSQLite(path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()

		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
		cmd.Env = append(os.Environ(), "TICKETS_HELPER_DB="+path, "TICKETS_HELPER_KEYS="+strconv.Itoa(keys))
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(stdout)
		if !lines.Scan() || lines.Text() != "ready" {
			t.Fatalf("helper did not get ready: %q", lines.Text())
		}
		fmt.Fprintln(stdin, "go")

		byKey := map[string][]Ticket{}
		// Start once the helper has written its first ticket, so both write at once.
		readHelper := func() bool {
			for lines.Scan() {
				var key string
				var tk Ticket
				if _, err := fmt.Sscan(lines.Text(), &key, &tk.TicketID, &tk.Status); err != nil {
					continue // the test framework's own output
				}
				byKey[key] = append(byKey[key], tk)
				return true
			}
			return false
		}
		if !readHelper() {
			t.Fatal("helper wrote no ticket")
		}
		mineCreated := 0
		for k := range keys {
			key := fmt.Sprintf("key-%03d", k)
			tk, err := s.Create(context.Background(), req(key))
			if err != nil {
				t.Fatal(err)
			}
			byKey[key] = append(byKey[key], tk)
			if tk.Status == StatusCreated {
				mineCreated++
			}
		}
		for readHelper() {
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper: %v", err)
		}
		for key, ts := range byKey {
			if len(ts) != 2 {
				t.Errorf("%s: %d answers, want one per process", key, len(ts))
			}
		}
		checkIDs(t, byKey, keys)
		t.Logf("this process created %d of %d tickets, the helper %d", mineCreated, keys, keys-mineCreated)
	})
}

func TestHelperProcess(t *testing.T) {
	path := os.Getenv("TICKETS_HELPER_DB")
	if path == "" {
		t.Skip("helper for TestSQLiteTwoProcesses")
	}
	n, _ := strconv.Atoi(os.Getenv("TICKETS_HELPER_KEYS"))
	s, err := OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fmt.Println("ready")
	bufio.NewScanner(os.Stdin).Scan() // wait for "go"
	// The other end first: the two processes meet in the middle.
	for k := n - 1; k >= 0; k-- {
		key := fmt.Sprintf("key-%03d", k)
		tk, err := s.Create(context.Background(), req(key))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println(key, tk.TicketID, tk.Status)
	}
}

func BenchmarkSQLiteCreate(b *testing.B) {
	s, err := OpenSQLite(filepath.Join(b.TempDir(), "tickets.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	i := 0
	for b.Loop() {
		i++
		if _, err := s.Create(context.Background(), req(strconv.Itoa(i))); err != nil {
			b.Fatal(err)
		}
	}
}
