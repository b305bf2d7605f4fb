package processor_test

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"triage"
	embedded "triage/instructions"
	"triage/internal/agent"
	"triage/internal/clients/mail"
	"triage/internal/dispatcher"
	"triage/internal/instructions"
	"triage/internal/processor"
	"triage/internal/replies"
	"triage/internal/serial"
)

// renamed copies the shipped instructions with every replace applied.
func renamed(t *testing.T, replace ...string) fs.FS {
	t.Helper()
	out := fstest.MapFS{}
	r := strings.NewReplacer(replace...)
	err := fs.WalkDir(embedded.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(embedded.FS, p)
		out[p] = &fstest.MapFile{Data: []byte(r.Replace(string(b)))}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func assemble(t *testing.T, fsys fs.FS, m agent.Model, ob mail.Sender) (*processor.Processor, error) {
	t.Helper()
	set, err := instructions.LoadScenarios(fsys, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := instructions.LoadTools(fsys, instructions.ToolsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ext, _ := serial.New()
	// Tools that are not builtins (the manuals MCP server) are not reached here.
	routes := map[string]dispatcher.Func{}
	for _, name := range ts.Names() {
		if ts.Get(name).Builtin == "" {
			routes[name] = dispatcher.Untyped(func(context.Context, *dispatcher.Call) (map[string]any, error) {
				return nil, errors.New("not used by this test")
			})
		}
	}
	return processor.Assemble(agent.Config{Model: m, MaxRetries: -1},
		dispatcher.Config{Tools: ts, Routes: routes, Builtins: dispatcher.Routes(nil, nil, nil, ob, "Serwis <serwis@example.com>", "example.com", dispatcher.Notices{})},
		processor.Config{Scenarios: set, Extractor: ext})
}

// The function whose success means handled comes from tools.yaml (final:
// true), not from its name: a team may call its reply function anything.
func TestFinalFromBindings(t *testing.T) {
	fsys := renamed(t, "name: send_email", "name: reply_to_customer", "  send_email:\n", "  reply_to_customer:\n")
	ob, err := replies.NewOutbox(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p, err := assemble(t, fsys, &scripted{send: "reply_to_customer"}, ob)
	if err != nil {
		t.Fatal(err)
	}
	out := p.Process(context.Background(), processor.Input{Name: "in.eml", Raw: eml("jan@example.pl", "Pytanie", "Dzień dobry, ekspres nie działa, proszę o naprawę gwarancyjną.")})
	if out.Status != triage.StatusReplied || out.Reply == nil || out.Reply.MessageID == "" {
		t.Fatalf("status %s/%s (%s), reply %+v; want replied through reply_to_customer", out.Status, out.Reason, out.Detail, out.Reply)
	}

	// A scenario whose functions are none of them final is refused at start.
	fsys = renamed(t, "final: true", "final: false", "grounded: true", "grounded: false")
	if _, err := assemble(t, fsys, &scripted{}, ob); err == nil || !strings.Contains(err.Error(), "declares no final function") {
		t.Errorf("no final function: err = %v", err)
	}
}
