package e2e

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"triage/internal/clients/tickets"
	"triage/internal/ledger"
	"triage/internal/watch"
)

// TestBinarySendRetried: the real binary against an SMTP sink that refuses
// every submission with 451 (a temporary failure) and then, in one case,
// accepts again. A temporary refusal leaves the message for the next pass
// (watch --once exits 1; the ledger shows it processing with the server's
// answer; no ticket note, since the reply may still go out) until
// max_attempts: accepted at the third pass, it is replied once and its
// ticket carries no failure note; refused at every pass, the last attempt
// makes it failed/send_failed, moved to Needs-Human, with one note.
func TestBinarySendRetried(t *testing.T) {
	for _, tc := range []struct {
		name        string
		acceptAfter int // passes refused before the sink accepts (0: never)
	}{
		{"accepted at the third pass", 2},
		{"refused until the last attempt", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, "max_attempts: 3\n")
			w.sink.Refuse(&smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "Try again later"})
			in := w.deliver(0) // valid warranty: a ticket, then the reply

			for pass := 1; pass <= 3; pass++ {
				if tc.acceptAfter > 0 && pass == tc.acceptAfter+1 {
					w.sink.Refuse(nil)
				}
				code, out := w.run("watch", "--config", w.config, "--once")
				e := w.entry(in.ID)
				last := pass == 3
				accepted := tc.acceptAfter > 0 && pass > tc.acceptAfter
				switch {
				case accepted:
					if code != 0 || e.State != ledger.StateReplied || e.Attempts != pass {
						t.Errorf("pass %d: exit %d, ledger %s/%s attempts %d; want 0, replied at attempt %d\n%s", pass, code, e.State, e.Reason, e.Attempts, pass, out)
					}
				case last:
					if code != 1 || e.State != ledger.StateFailed || e.Reason != "send_failed" || !strings.Contains(e.Detail, "451 4.3.0 Try again later") {
						t.Errorf("pass %d: exit %d, ledger %s/%s %q; want 1, failed/send_failed with the server's answer\n%s", pass, code, e.State, e.Reason, e.Detail, out)
					}
				default:
					if code != 1 || e.State != ledger.StateProcessing || e.Reason != "send_failed" || e.Attempts != pass ||
						!strings.Contains(e.Detail, "451 4.3.0 Try again later (temporary)") {
						t.Errorf("pass %d: exit %d, ledger %s/%s attempts %d %q; want 1, processing/send_failed at attempt %d with the server's answer\n%s",
							pass, code, e.State, e.Reason, e.Attempts, e.Detail, pass, out)
					}
					if !strings.Contains(out, "reply refused for now; the message is tried again on a later pass") {
						t.Errorf("pass %d: no WARN line saying the message is tried again:\n%s", pass, out)
					}
					if n := failureNotes(t, w); n != 0 {
						t.Errorf("pass %d: the ticket has %d failure notes while the reply may still go out", pass, n)
					}
				}
			}

			wantReplies := map[bool]int{true: 1, false: 0}[tc.acceptAfter > 0]
			if n := w.sink.CountByHeader("In-Reply-To")[in.ID]; n != wantReplies {
				t.Errorf("replies sent: %d, want %d", n, wantReplies)
			}
			wantNotes := 1 - wantReplies
			if n := failureNotes(t, w); n != wantNotes {
				t.Errorf("the ticket has %d notes of the failed reply, want %d", n, wantNotes)
			}
			inFailed := false
			for _, m := range w.folder(watch.DefaultFailedFolder) {
				inFailed = inFailed || headerOf(m.Raw, "Message-Id") == in.ID || headerOf(m.Raw, "Message-ID") == in.ID
			}
			if inFailed != (wantReplies == 0) {
				t.Errorf("in %s: %v, want %v", watch.DefaultFailedFolder, inFailed, wantReplies == 0)
			}
		})
	}
}

// failureNotes counts the notes triage added to the world's one ticket
// saying that its reply could not be sent.
func failureNotes(t *testing.T, w *world) int {
	t.Helper()
	s, err := tickets.OpenSQLite(filepath.Join(w.dir, "tickets.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	list, err := s.List(context.Background(), 0)
	if err != nil || len(list) != 1 {
		t.Fatalf("tickets: %v %+v, want one", err, list)
	}
	n := 0
	for _, note := range w.ticket(list[0].TicketID).Notes {
		if note.From == "triage" && strings.Contains(note.Text, "could not send its reply") {
			n++
		}
	}
	return n
}

// TestBinaryHealthzSendFailing: the daemon with --metrics-addr and
// max_send_failures: 2 against an SMTP sink that refuses every reply for
// good (554). /healthz is 200 while connected; after the second refused
// reply it answers 503 naming sending; each refused submission counts once
// in triage_errors_total{kind="smtp"}. Once the sink accepts again, the
// next reply that goes out makes /healthz 200 again.
func TestBinaryHealthzSendFailing(t *testing.T) {
	w := newWorld(t, "max_send_failures: 2\n")
	w.sink.Refuse(&smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 7, 1}, Message: "Relay access denied"})
	daemon := w.command("watch", "--config", w.config, "--metrics-addr", "127.0.0.1:0")
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { daemon.Process.Kill() })
	addr := w.waitLogAttr("metrics", "addr")
	for !healthy(addr) {
		time.Sleep(20 * time.Millisecond)
	}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	first := w.deliver(0)
	w.waitLedger(first.ID, ledger.StateFailed)
	if code, body := get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz after one refused reply = %d %q, want 200 (max_send_failures: 2)", code, body)
	}
	second := w.deliver(1)
	w.waitLedger(second.ID, ledger.StateFailed)
	code, body := get("/healthz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "sending failing") {
		t.Errorf("/healthz after two refused replies = %d %q, want 503 naming sending", code, body)
	}
	_, metrics := get("/metrics")
	if !strings.Contains(metrics, `triage_errors_total{kind="smtp"} 2`+"\n") {
		t.Errorf("want triage_errors_total{kind=\"smtp\"} 2 (one per refused submission):\n%s", grepLines(metrics, "triage_errors_total"))
	}

	w.sink.Refuse(nil)
	third := w.deliver(2)
	w.sink.WaitFor(t, func() bool { return w.sink.CountByHeader("In-Reply-To")[third.ID] == 1 })
	w.waitLedger(third.ID, ledger.StateReplied)
	if code, body := get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz after a reply went out = %d %q, want 200", code, body)
	}
	daemon.Process.Signal(syscall.SIGTERM)
	if err := daemon.Wait(); err != nil {
		t.Errorf("daemon after SIGTERM: %v\n%s", err, w.logs())
	}
}

// waitLedger waits until the ledger has the inbound Message-ID id in state.
func (w *world) waitLedger(id string, state ledger.State) {
	w.t.Helper()
	for {
		for _, e := range w.ledgerEntries() {
			if e.MessageID == id && e.State == state {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// grepLines is the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
