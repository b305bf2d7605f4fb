package watch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"triage/internal/testkit/mailtest"
)

// The same scenarios against a real Dovecot on loopback. mailtest.StartDovecot
// skips with a clear message when Dovecot is not installed, and fails when
// the CI environment variable is set: CI must run these.

func dovecotTarget(t *testing.T) (mailtest.Target, *mailtest.Dovecot) {
	d := mailtest.StartDovecot(t)
	return d.Target(), d
}

func TestDovecotAnswerOnce(t *testing.T) {
	tgt, _ := dovecotTarget(t)
	scenarioAnswerOnce(t, tgt)
}

func TestDovecotProcessedFolderAndSent(t *testing.T) {
	tgt, _ := dovecotTarget(t)
	scenarioProcessedFolderAndSent(t, tgt)
}

func TestDovecotLimits(t *testing.T) {
	tgt, _ := dovecotTarget(t)
	scenarioLimits(t, tgt)
}

func TestDovecotIdleWakeup(t *testing.T) {
	tgt, _ := dovecotTarget(t)
	scenarioIdleWakeup(t, tgt, nil)
}

// TestDovecotRestart: the server goes away under the daemon (while it idles)
// and comes back; mail that arrives afterwards is answered, once.
func TestDovecotRestart(t *testing.T) {
	tgt, d := dovecotTarget(t)
	w := answerTwo(t, newEnv(t, tgt), func() { d.Restart(t) }, "Po restarcie")
	if w.Stats().Reconnects < 1 {
		t.Errorf("Reconnects = %d, want >= 1", w.Stats().Reconnects)
	}
}

// TestDovecotUIDValidityChange renumbers the Maildir the way a restored
// backup or a rebuilt index would: Dovecot stopped, its UID list and indexes
// deleted, every message's flags stripped, Dovecot started again.
func TestDovecotUIDValidityChange(t *testing.T) {
	tgt, d := dovecotTarget(t)
	scenarioUIDValidity(t, tgt, func() {
		var before uint32
		c := tgt.Client(t)
		if data, err := c.Select("INBOX", nil).Wait(); err == nil {
			before = data.UIDValidity
		}
		c.Close()
		d.Stop(t)
		root := d.MailDir(d.User)
		matches, _ := filepath.Glob(filepath.Join(root, "dovecot*"))
		for _, m := range matches {
			if err := os.RemoveAll(m); err != nil {
				t.Fatal(err)
			}
		}
		for _, sub := range []string{"cur", "new"} {
			files, _ := filepath.Glob(filepath.Join(root, sub, "*"))
			for _, f := range files {
				base, _, _ := strings.Cut(filepath.Base(f), ":")
				if err := os.Rename(f, filepath.Join(root, "new", base)); err != nil {
					t.Fatal(err)
				}
			}
		}
		d.Restart(t)
		c = tgt.Client(t)
		data, err := c.Select("INBOX", nil).Wait()
		if err != nil {
			t.Fatal(err)
		}
		if data.UIDValidity == before {
			t.Fatalf("UIDVALIDITY still %d after the rebuild", before)
		}
	})
}

func TestDovecotPendingReply(t *testing.T) {
	scenarioPendingReply(t, func(t *testing.T) mailtest.Target {
		tgt, _ := dovecotTarget(t)
		return tgt
	})
}
