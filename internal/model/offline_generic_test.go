package model_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"triage/instructions"
	"triage/internal/prompt"
)

func decl(name string, required []any, props ...string) *genai.FunctionDeclaration {
	p := map[string]any{}
	for _, n := range props {
		p[n] = map[string]any{"type": "string"}
	}
	return &genai.FunctionDeclaration{Name: name, Description: "test " + name,
		ParametersJsonSchema: map[string]any{"type": "object", "properties": p, "required": required}}
}

// A scenario with a tool no Go code knows: the offline model fills the
// query with a significant word of the customer's subject and puts the
// tool's text into its reply, sent with whatever the reply function is called.
func TestUnknownToolLookup(t *testing.T) {
	_, client := start(t)
	var query any
	tools := &fakeTools{extra: map[string]func(map[string]any) map[string]any{
		"lookup_manual": func(args map[string]any) map[string]any {
			query = args["query"]
			return map[string]any{"text": "Descaling: hold CUP and STEAM for 5 seconds."}
		},
		"answer_customer": func(map[string]any) map[string]any { return map[string]any{"status": "sent"} },
	}}
	fns := []*genai.FunctionDeclaration{
		decl("lookup_manual", []any{"query"}, "query"),
		decl("answer_customer", []any{"to", "subject", "body"}, "to", "subject", "body"),
	}
	f := prompt.Facts{Language: "pl", Subject: "Jak odkamienić ekspres Aroma?", From: "jan@example.com", ReplyTo: "jan@example.com"}
	turns, body, final := converse(t, client, f, "Dzień dobry, świeci się lampka DESCALE.", "Answer from the manual.", fns, tools)
	want := [][]call{
		{{"lookup_manual", map[string]any{"query": "odkamienić"}}},
		{{"answer_customer", map[string]any{"to": "jan@example.com", "subject": "Re: Jak odkamienić ekspres Aroma?"}}},
	}
	if diff := cmp.Diff(want, turns); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if query != "odkamienić" || final != "Reply sent." {
		t.Errorf("query %v, final %q", query, final)
	}
	for _, s := range []string{"Descaling: hold CUP and STEAM for 5 seconds.", "zastępczy model bez AI"} {
		if !strings.Contains(body, s) {
			t.Errorf("body lacks %q:\n%s", s, body)
		}
	}
}

// Functions named differently from the shipped ones are followed the same
// way: a lookup by serial for every serial, a follow-up only for a serial
// whose lookup was positive, then the reply.
func TestRenamedFunctions(t *testing.T) {
	_, client := start(t)
	status := map[string]string{"SN-1001": "valid", "SN-2002": "expired"}
	tools := &fakeTools{extra: map[string]func(map[string]any) map[string]any{
		"verify_serial": func(a map[string]any) map[string]any {
			sn := a["serial_number"].(string)
			return map[string]any{"serial_number": sn, "status": status[sn]}
		},
		"open_case": func(map[string]any) map[string]any { return map[string]any{"ticket_id": "CASE-7"} },
		"reply":     func(map[string]any) map[string]any { return map[string]any{"status": "sent"} },
	}}
	fns := []*genai.FunctionDeclaration{
		decl("verify_serial", []any{"serial_number"}, "serial_number"),
		decl("open_case", []any{"serial_number", "customer_email"}, "serial_number", "customer_email"),
		decl("reply", []any{"to", "subject", "body"}, "to", "subject", "body"),
	}
	for _, tc := range []struct {
		serials []string
		want    [][]call
		body    []string
	}{
		{[]string{"SN-2002", "SN-1001"}, [][]call{
			{{"verify_serial", map[string]any{"serial_number": "SN-2002"}}, {"verify_serial", map[string]any{"serial_number": "SN-1001"}}},
			{{"open_case", map[string]any{"serial_number": "SN-1001", "customer_email": "jan@example.com"}}},
			{{"reply", map[string]any{"to": "r@example.com", "subject": "Re: X"}}},
		}, []string{"SN-2002", "SN-1001", "CASE-7"}},
		{[]string{"SN-2002"}, [][]call{
			{{"verify_serial", map[string]any{"serial_number": "SN-2002"}}},
			{{"reply", map[string]any{"to": "r@example.com", "subject": "Re: X"}}},
		}, []string{"SN-2002", "płatną naprawę"}},
	} {
		f := prompt.Facts{Language: "pl", Subject: "X", From: "jan@example.com", ReplyTo: "r@example.com", SerialNumbers: tc.serials}
		turns, body, _ := converse(t, client, f, "Treść.", "", fns, tools)
		if diff := cmp.Diff(tc.want, turns); diff != "" {
			t.Errorf("%v: calls (-want +got):\n%s", tc.serials, diff)
		}
		for _, s := range tc.body {
			if !strings.Contains(body, s) {
				t.Errorf("%v: body lacks %q:\n%s", tc.serials, s, body)
			}
		}
	}
}

// The offline model follows any scenario from its declarations: its code
// names no scenario.
func TestNoScenarioNamesInCode(t *testing.T) {
	names, err := fs.Glob(instructions.FS, "scenarios/*.md")
	if err != nil || len(names) == 0 {
		t.Fatal(err, names)
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			name := strings.TrimSuffix(filepath.Base(n), ".md")
			if strings.Contains(string(b), `"`+name+`"`) {
				t.Errorf("%s names the scenario %q", file, name)
			}
		}
	}
}
