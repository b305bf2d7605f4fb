package e2e

import (
	"os"
	"strings"
	"testing"
)

// With smtp.save_sent: false the reply goes out and is not appended to the
// Sent folder (the provider files it there itself).
func TestBinarySaveSentFalse(t *testing.T) {
	w := newWorld(t, "")
	cfg, err := os.ReadFile(w.config)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, w.config, strings.Replace(string(cfg), "  password_file: smtp.pass\n", "  password_file: smtp.pass\n  save_sent: false\n", 1))
	in := w.deliver(0)
	if code, out := w.run("watch", "--config", w.config, "--once"); code != 0 {
		t.Fatalf("watch --once: exit %d\n%s", code, out)
	}
	if n := w.sink.CountByHeader("In-Reply-To")[in.ID]; n != 1 {
		t.Fatalf("replies: %d, want 1", n)
	}
	if n := len(w.folder("Sent")); n != 0 {
		t.Errorf("Sent folder holds %d messages, want none with save_sent: false", n)
	}
}
