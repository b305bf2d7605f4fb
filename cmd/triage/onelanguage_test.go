package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gomail "github.com/emersion/go-message/mail"

	"triage"
	"triage/internal/dispatcher"
	"triage/internal/processor"
	"triage/internal/prompt"
	"triage/internal/testkit/geminitest"
)

// oneLanguageRun processes one customer email (subject, text) with a
// scripted Gemini playing steps, and returns the outcome and the reply in
// the outbox: its From display name and body ("" when none went out).
func oneLanguageRun(t *testing.T, from, subject, text string, steps ...geminitest.Step) (o processor.Outcome, fromName, body string) {
	t.Helper()
	noDefaultConfig(t)
	dir := t.TempDir()
	eml := filepath.Join(dir, "in.eml")
	raw := fmt.Sprintf("From: %s\r\nTo: serwis@example.com\r\nSubject: %s\r\nDate: Mon, 16 Nov 2026 09:12:44 +0100\r\n"+
		"Message-ID: <onelang-%d@example.net>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n%s\r\n",
		from, mime.QEncoding.Encode("UTF-8", subject), len(text), text)
	if err := os.WriteFile(eml, []byte(raw), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := geminitest.New(t, steps...)
	t.Setenv("GEMINI_API_KEY", geminitest.APIKey)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", srv.URL())
	var out, errb bytes.Buffer
	outbox := filepath.Join(dir, "outbox")
	code := run(context.Background(), []string{"process", "--json", "--warranty-csv", "../../examples/warranty.csv",
		"--tickets-db", filepath.Join(dir, "tickets.db"), "--outbox", outbox, "--staff", "kierownik@example.com", eml},
		strings.NewReader(""), &out, &errb)
	outs := decodeOutcomes(t, out.String())
	if len(outs) != 1 {
		t.Fatalf("exit %d, %d outcomes; stderr:\n%s", code, len(outs), errb.String())
	}
	files, _ := filepath.Glob(filepath.Join(outbox, "*.eml"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r, err := gomail.CreateReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		addrs, _ := r.Header.AddressList("From")
		p, err := r.NextPart()
		if err != nil {
			t.Fatal(err)
		}
		text, _ := io.ReadAll(p.Body)
		fromName, body = addrs[0].Name, string(text)
	}
	return outs[0], fromName, body
}

// TestOneReplyOneLanguage: a reply is in one language, its signature and
// its From display name included, whatever the model writes. A model
// answering a Japanese customer in Polish (the inbox's default) gets a
// reply signed in Polish, not in English; a model that pastes a function
// result in another language (the manuals server's English "No manual
// section matches") into a German reply, or writes a line in English, is
// refused (wrong_language) and its German rewrite goes out, signed in
// German.
func TestOneReplyOneLanguage(t *testing.T) {
	t.Run("a Polish body to a Japanese customer is signed in Polish", func(t *testing.T) {
		body := "Dzień dobry,\n\ndziękujemy za wiadomość. Aby sprawdzić gwarancję, prosimy o podanie numeru seryjnego urządzenia."
		o, fromName, sent := oneLanguageRun(t, "Yuki Tanaka <yuki@example.jp>", "コーヒーメーカーの故障",
			"こんにちは。コーヒーメーカーが動かなくなりました。修理をお願いできますか。",
			geminitest.One(geminitest.Call("c0", prompt.ChooseScenario, geminitest.Obj("scenario", "missing-info", "reason", "no serial number"))),
			geminitest.One(geminitest.Call("c1", "send_email", geminitest.Obj("to", "yuki@example.jp", "subject", "Re: コーヒーメーカーの故障", "body", body))),
			geminitest.One(geminitest.Text("-")))
		if o.Status != triage.StatusReplied || o.Language != "ja" {
			t.Fatalf("status %s language %s (%s %s), want replied ja", o.Status, o.Language, o.Reason, o.Detail)
		}
		if fromName != "Serwis gwarancyjny" || !strings.Contains(sent, "Zespół serwisu gwarancyjnego") || strings.Contains(sent, "Warranty Support Team") {
			t.Errorf("a Polish reply signed as %q:\n%s", fromName, sent)
		}
	})
	t.Run("an English line in a German reply is refused", func(t *testing.T) {
		pasted := "Guten Tag,\n\nvielen Dank für Ihre Nachricht. Leider konnten wir Ihre Frage nicht sofort beantworten.\n" +
			"No manual section matches your question about the descaling programme, sorry about that.\n\nMit freundlichen Grüßen"
		german := "Guten Tag,\n\nvielen Dank für Ihre Nachricht. Leider steht in der Anleitung nichts zum Entkalken dieses Geräts. Bitte nennen Sie uns die Seriennummer."
		o, fromName, sent := oneLanguageRun(t, "Klaus Becker <klaus.becker@example.de>", "Frage zum Entkalken",
			"Guten Tag, wie oft muss ich meine Kaffeemaschine entkalken und welches Mittel soll ich dafür verwenden?",
			geminitest.One(geminitest.Text(`{"scenario":"product-question","reason":"descaling"}`)),
			geminitest.One(geminitest.Call("c1", "send_email", geminitest.Obj("to", "klaus.becker@example.de", "subject", "Re: Frage zum Entkalken", "body", pasted))),
			geminitest.One(geminitest.Call("c2", "send_email", geminitest.Obj("to", "klaus.becker@example.de", "subject", "Re: Frage zum Entkalken", "body", german))),
			geminitest.One(geminitest.Text("-")))
		refused := ""
		for _, c := range o.FunctionCalls {
			if c.Name == dispatcher.FuncSendEmail && c.Error != nil && refused == "" {
				refused = string(c.Error.Code)
			}
		}
		if refused != string(dispatcher.CodeWrongLanguage) || o.Status != triage.StatusReplied {
			t.Fatalf("first send_email refused %q, status %s (%s %s); want wrong_language, then replied", refused, o.Status, o.Reason, o.Detail)
		}
		if fromName != "Garantieservice" || strings.Contains(sent, "No manual") || !strings.Contains(sent, "Ihr Garantieservice-Team") {
			t.Errorf("sent as %q:\n%s", fromName, sent)
		}
	})
}
