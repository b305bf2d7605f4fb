package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"triage/internal/testkit/mailtest"
)

// watch --log-format json: every line is JSON (the final error included),
// every line about a message names its key, Message-ID and UID, one summary
// line per message, no Go map syntax.
func TestWatchLogs(t *testing.T) {
	noDefaultConfig(t)
	srv := mailtest.StartIMAP(t, mailtest.IMAPOptions{})
	raw, err := os.ReadFile("../../examples/inbox/01-valid-warranty-pl.eml")
	if err != nil {
		t.Fatal(err)
	}
	srv.Append(t, "INBOX", raw)
	srv.Append(t, "INBOX", []byte(strings.Replace(string(raw), "Message-ID: <", "Message-ID: <second.", 1)))
	dir := t.TempDir()
	csv, _ := filepath.Abs("../../examples/warranty.csv")
	cfg := filepath.Join(dir, "triage.yaml")
	writeTestFile(t, cfg, "imap: {addr: "+srv.Addr+", tls: none, user: "+srv.User+", password: "+srv.Password+"}\noutbox: out\nledger: ledger.db\n"+
		"log: {format: json, level: debug}\npipeline: {offline: true, warranty_csv: "+csv+", tickets_db: tickets.db}\n")
	code, _, stderr := runArgs(t, "watch", "--config", cfg, "--once")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	summaries := 0
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("not JSON: %q", line)
			continue
		}
		if strings.Contains(line, "map[") {
			t.Errorf("Go map syntax: %s", line)
		}
		if strings.Count(line, `"key":`) > 1 || strings.Count(line, `"message_id":`) > 1 {
			t.Errorf("an attribute repeated: %s", line)
		}
		msg, _ := rec["msg"].(string)
		switch {
		case msg == "message":
			summaries++
			fallthrough
		case strings.HasPrefix(msg, "agent "), strings.HasPrefix(msg, "dispatcher: "), msg == "email processed":
			for _, k := range []string{"key", "message_id", "uid"} {
				if rec[k] == nil || rec[k] == "" {
					t.Errorf("%q line without %s: %s", msg, k, line)
				}
			}
		}
	}
	if summaries != 2 {
		t.Errorf("%d summary lines for 2 messages:\n%s", summaries, stderr)
	}

	// The final error of a failing run is a JSON line too.
	writeTestFile(t, cfg, "imap: {addr: "+srv.Addr+", tls: none, user: "+srv.User+", password: wrong}\noutbox: out\nledger: ledger.db\n"+
		"log: {format: json}\npipeline: {offline: true, warranty_csv: "+csv+", tickets_db: tickets.db}\n")
	code, _, stderr = runArgs(t, "watch", "--config", cfg, "--once")
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	var last map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || code != exitAuth || last["level"] != "ERROR" ||
		!strings.Contains(last["err"].(string), "refused the login") || last["exit_status"] != float64(exitAuth) {
		t.Errorf("exit %d, last line %q (%v)", code, lines[len(lines)-1], err)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "{") {
			t.Errorf("not JSON: %q", l)
		}
	}
}

// process -v: every line logged about an email names its key and Message-ID.
func TestProcessLogsNameTheMessage(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runCLI(t, "", "process", "-v", "--warranty-csv", "../../examples/warranty.csv", "--tickets-db", filepath.Join(dir, "t.db"),
		"--outbox", filepath.Join(dir, "o"), "../../examples/inbox/01-valid-warranty-pl.eml", "../../examples/inbox/03-expired-warranty-pl.eml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	n := 0
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, "msg=\"agent ") || strings.Contains(line, "msg=\"dispatcher: ") {
			n++
			if !strings.Contains(line, " key=") || !strings.Contains(line, " message_id=") {
				t.Errorf("line without key/message_id: %s", line)
			}
		}
		if strings.Contains(line, "map[") {
			t.Errorf("Go map syntax: %s", line)
		}
	}
	if n == 0 {
		t.Errorf("no agent or dispatcher lines:\n%s", stderr)
	}
}
