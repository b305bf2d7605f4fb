package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gomail "github.com/emersion/go-message/mail"
	"github.com/google/go-cmp/cmp"
)

// TestProcessGermanCustomer: triage process labels a German email de,
// the offline stand-in answers in German (saying it is a stand-in) and
// the reply is signed in German.
func TestProcessGermanCustomer(t *testing.T) {
	dir := t.TempDir()
	outbox := filepath.Join(dir, "outbox")
	code, stdout, stderr := runCLI(t, "", "process", "--json", "--warranty-csv", "../../examples/warranty.csv", "--tickets-db", filepath.Join(dir, "t.db"), "--outbox", outbox,
		"testdata/language/de.eml", "testdata/language/fr.eml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var langs []string
	dec := json.NewDecoder(strings.NewReader(stdout))
	for dec.More() {
		var o struct{ Language, Status string }
		if err := dec.Decode(&o); err != nil {
			t.Fatal(err)
		}
		langs = append(langs, o.Status+"/"+o.Language)
	}
	if diff := cmp.Diff([]string{"replied/de", "replied/fr"}, langs); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	files, _ := filepath.Glob(filepath.Join(outbox, "*.eml"))
	german := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r, err := gomail.CreateReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		to, _ := r.Header.AddressList("To")
		from, _ := r.Header.AddressList("From")
		p, err := r.NextPart()
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(p.Body)
		text := strings.TrimSpace(string(body))
		if to[0].Address != "klaus.becker@example.de" {
			continue
		}
		german++
		if from[0].Name != "Garantieservice" || !strings.HasPrefix(text, "Guten Tag,") ||
			!strings.Contains(text, "Offline-Modell") || !strings.HasSuffix(text, "\nIhr Garantieservice-Team") {
			t.Errorf("German reply: From %q, body:\n%s", from[0].Name, text)
		}
	}
	if german != 1 {
		t.Errorf("%d German replies among %d", german, len(files))
	}
}

// TestProcessGermanCustomerWithPhoto: a German email with a photo of the
// serial plate, answered offline, is signed in German (the customer's
// language, not a guess from the reply's text), with a German From name,
// and the stand-in says in German that it did not look at the photo: not
// a word of Polish.
func TestProcessGermanCustomerWithPhoto(t *testing.T) {
	dir := t.TempDir()
	png := base64.StdEncoding.EncodeToString(append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{7}, 300)...))
	raw := "From: Klaus Becker <klaus.becker@example.de>\r\nTo: serwis@example.com\r\nSubject: Kaffeemaschine defekt\r\n" +
		"Date: Mon, 16 Nov 2026 10:00:00 +0100\r\nMessage-ID: <lang-de-photo@example.de>\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" +
		"Guten Tag,\r\nmeine Kaffeemaschine heizt das Wasser nicht mehr. Die Seriennummer ist SN-48213-PL, ein Foto des Typenschilds ist angehängt.\r\n" +
		"Können Sie sie bitte im Rahmen der Garantie reparieren?\r\nMit freundlichen Grüßen\r\nKlaus Becker\r\n" +
		"--b1\r\nContent-Type: image/png\r\nContent-Disposition: attachment; filename=\"typenschild.png\"\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
		png + "\r\n--b1--\r\n"
	in := filepath.Join(dir, "de-photo.eml")
	if err := os.WriteFile(in, []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	outbox := filepath.Join(dir, "outbox")
	code, stdout, stderr := runCLI(t, "", "process", "--json", "--warranty-csv", "../../examples/warranty.csv", "--tickets-db", filepath.Join(dir, "t.db"), "--outbox", outbox, in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	outs := decodeOutcomes(t, stdout)
	if len(outs) != 1 || outs[0].Language != "de" || outs[0].Reply == nil || len(outs[0].Attachments) != 1 || !outs[0].Attachments[0].Sent {
		t.Fatalf("outcomes %+v: want one German reply, the photo sent to the model", outs)
	}
	f, err := os.Open(outs[0].Reply.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := gomail.CreateReader(f)
	if err != nil {
		t.Fatal(err)
	}
	from, _ := r.Header.AddressList("From")
	p, err := r.NextPart()
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(p.Body)
	text := strings.TrimSpace(string(body))
	if len(from) != 1 || from[0].Name != "Garantieservice" {
		t.Errorf("From %v, want the German From name", from)
	}
	if !strings.HasSuffix(text, "\nIhr Garantieservice-Team") || !strings.Contains(text, "Anhänge") {
		t.Errorf("reply not signed in German, or no German word about the photo:\n%s", text)
	}
	for _, pl := range []string{"Zespół", "Serwis gwarancyjny", "Model offline", "załącznik", "Dzień dobry"} {
		if strings.Contains(text, pl) {
			t.Errorf("Polish %q in the German reply:\n%s", pl, text)
		}
	}
	if strings.ContainsAny(text, "ąćęłńśźżĄĆĘŁŃŚŹŻ") {
		t.Errorf("Polish letters in the German reply:\n%s", text)
	}
}
