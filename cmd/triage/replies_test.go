package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"triage/internal/replies"

	gomail "github.com/emersion/go-message/mail"
)

// Running process twice over the same inbox writes each reply once: the
// second run says the reply already exists, as it opens no second ticket.
func TestProcessTwiceWritesNoSecondReply(t *testing.T) {
	dir := t.TempDir()
	files, err := filepath.Glob("../../examples/inbox/*.eml")
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	outbox := filepath.Join(dir, "outbox")
	args := append([]string{"process", "--staff", "reklamacje@example.com", "--warranty-csv", "../../examples/warranty.csv", "--tickets-db", filepath.Join(dir, "t.db"), "--outbox", outbox}, files...)
	code, first, stderr := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	written, _ := filepath.Glob(filepath.Join(outbox, "*.eml"))
	if len(written) == 0 || strings.Contains(first, "already exists") {
		t.Fatalf("first run wrote %d replies:\n%s", len(written), first)
	}
	code, second, stderr := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("second run: exit %d: %s", code, stderr)
	}
	again, _ := filepath.Glob(filepath.Join(outbox, "*.eml"))
	if len(again) != len(written) {
		t.Errorf("second run: %d reply files, want still %d", len(again), len(written))
	}
	answered := strings.Count(first, " written: ") // files also holds staff notices
	if n := strings.Count(second, "already exists (not written again)"); n != answered || n == 0 {
		t.Errorf("second run says 'already exists' %d times, want %d:\n%s", n, answered, second)
	}
	// --json says it too, and that no model ran: the outbox said so first.
	code, js, _ := runCLI(t, "", append([]string{"process", "--json"}, args[1:]...)...)
	existing := 0
	for _, o := range decodeOutcomes(t, js) {
		if o.Reply != nil && o.Reply.Existing {
			existing++
			if o.ModelCalls != 0 {
				t.Errorf("%s: %d model calls on a run over an answered email, want 0", o.File, o.ModelCalls)
			}
		}
	}
	if code != 0 || existing != answered {
		t.Errorf("--json: exit %d, %d existing replies, want %d", code, existing, answered)
	}
	if entries, _ := os.ReadDir(outbox); len(entries) != len(written)+4 {
		t.Errorf("outbox holds %d entries after three runs, want %d replies, %s, %s, %s and %s", len(entries), len(written), replies.IndexFile, replies.IndexDB, replies.LockFile, replies.ClaimsDir)
	}
}

// Replies are signed by the pipeline in their own language, with that
// language's From name, once; the subject carries one Re: and To the
// customer's display name.
func TestRepliesSignedInTheirLanguage(t *testing.T) {
	dir := t.TempDir()
	outbox := filepath.Join(dir, "outbox")
	code, _, stderr := runCLI(t, "", "process", "--warranty-csv", "../../examples/warranty.csv", "--tickets-db", filepath.Join(dir, "t.db"), "--outbox", outbox,
		"../../examples/inbox/01-valid-warranty-pl.eml", "../../examples/inbox/02-valid-warranty-en.eml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(outbox, "*.eml"))
	if len(files) != 2 {
		t.Fatalf("%d replies", len(files))
	}
	got := map[string]bool{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r, err := gomail.CreateReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		from, _ := r.Header.AddressList("From")
		to, _ := r.Header.AddressList("To")
		subject, _ := r.Header.Subject()
		p, err := r.NextPart()
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(p.Body)
		text := strings.TrimSpace(string(body))
		switch {
		case strings.HasSuffix(text, "\nWarranty Support Team"):
			got["en"] = true
			if from[0].Name != "Warranty Service" || strings.Contains(text, "Zespół") || strings.Count(text, "Warranty Support Team") != 1 {
				t.Errorf("English reply: From %q, body:\n%s", from[0].Name, text)
			}
		case strings.HasSuffix(text, "\nZespół serwisu gwarancyjnego"):
			got["pl"] = true
			if from[0].Name != "Serwis gwarancyjny" || strings.Count(text, "Zespół serwisu gwarancyjnego") != 1 {
				t.Errorf("Polish reply: From %q, body:\n%s", from[0].Name, text)
			}
		default:
			t.Errorf("reply not signed by the pipeline:\n%s", text)
		}
		if len(to) != 1 || to[0].Name == "" || !strings.HasPrefix(subject, "Re: ") || strings.Count(strings.ToLower(subject), "re:") != 1 {
			t.Errorf("To %v, Subject %q", to, subject)
		}
	}
	if !got["en"] || !got["pl"] {
		t.Errorf("signed: %v, want one English and one Polish reply", got)
	}
}
