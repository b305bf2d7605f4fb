package dispatcher_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"triage"
	embedded "triage/instructions"
	mailclient "triage/internal/clients/mail"
	"triage/internal/dispatcher"
	"triage/internal/instructions"
	"triage/internal/language"
	"triage/internal/manuals"
	"triage/internal/testkit/toolstest"
)

// TestOneLanguage: send_email takes a reply in one language, the reply's
// or the inbox's default, and refuses (wrong_language) one in a third
// language, one with a line in a second language, and one that pastes a
// function result in another language (the manuals server's English "No
// manual section matches") into a German reply; the calls are those of a
// model breaking the rule on purpose.
func TestOneLanguage(t *testing.T) {
	det, err := language.New(language.Config{Default: "pl"})
	if err != nil {
		t.Fatal(err)
	}
	ob, err := mailclient.NewOutbox(filepath.Join(t.TempDir(), "outbox"))
	if err != nil {
		t.Fatal(err)
	}
	manual := func(context.Context, *dispatcher.Call) (dispatcher.Result, error) {
		return dispatcher.Result{Value: map[string]any{"text": manuals.NoMatch("Entkalken Kaffeemaschine Programm")}}, nil
	}
	tools, err := instructions.LoadTools(embedded.FS, instructions.ToolsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := dispatcher.New(dispatcher.Config{
		Tools:    tools,
		Builtins: dispatcher.Routes(nil, nil, nil, ob, "Serwis <serwis@example.com>", "example.com", dispatcher.Notices{}),
		Routes:   map[string]dispatcher.Func{"search_manual": manual},
		Language: det,
		Now:      func() time.Time { return time.Date(2026, 11, 22, 8, 15, 0, 0, time.UTC) },
	})
	if err != nil {
		t.Fatal(err)
	}
	msg := toolstest.Message()
	msg.Text = "Guten Tag, wie starte ich das Entkalken Kaffeemaschine Programm? Die Anleitung sagt nichts dazu."
	search := toolstest.Function(t, "search_manual", toolstest.Object([]any{"query"}, map[string]any{"query": map[string]any{"type": "string"}}))
	tests := []struct {
		name, lang, body string
		refused          bool
		names            string // what the refusal names
	}{
		{"German to a German customer", "de", "Guten Tag,\n\nleider steht in der Anleitung nichts zum Entkalken dieses Geräts. Bitte nennen Sie uns die Seriennummer.", false, ""},
		{"the default language to a German customer", "de", "Dzień dobry,\n\nw instrukcji nie ma informacji o odkamienianiu tego urządzenia. Prosimy o numer seryjny.", false, ""},
		{"a short body", "de", "Danke.", false, ""},
		{"English to a German customer", "de", "Hello,\n\nthe manual says nothing about descaling this machine. Please send us the serial number.", true, "written in en"},
		{"an English line in a German reply", "de", "Guten Tag,\n\nleider steht in der Anleitung nichts zum Entkalken dieses Geräts.\nPlease send us the serial number of the machine so we can check it.\n\nMit freundlichen Grüßen", true, "the line"},
		{"a pasted tool result", "de", "Guten Tag,\n\nNo manual section matches \"Entkalken Kaffeemaschine Programm\". Bitte nennen Sie uns die Seriennummer Ihres Geräts.", true, "search_manual"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := d.Session(msg, toolstest.Scenario(t, false, search), triage.Key("inbox:"+tt.name))
			s.SetOptions(dispatcher.Options{Language: tt.lang})
			if env := s.Call(context.Background(), "search_manual", map[string]any{"query": "Entkalken Kaffeemaschine Programm"}).Envelope(); env["ok"] != true {
				t.Fatalf("search_manual: %v", env)
			}
			s.StartTurn()
			env := s.Call(context.Background(), dispatcher.FuncSendEmail, map[string]any{"to": msg.ReplyTo, "subject": "Re: x", "body": tt.body}).Envelope()
			code, message := "", ""
			if e, ok := env["error"].(map[string]any); ok {
				code, _ = e["code"].(string)
				message, _ = e["message"].(string)
			}
			if refused := code == string(dispatcher.CodeWrongLanguage); refused != tt.refused || !strings.Contains(message, tt.names) {
				t.Errorf("case %d: %v, want refused %v naming %q", i, env, tt.refused, tt.names)
			}
		})
	}
}
