package instructions_test

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	embedded "triage/instructions"
	"triage/internal/instructions"
)

var routes = []string{"check_warranty", "create_ticket", "send_email", "notify_staff", "search_manual"}

const sendEmail = `
  - name: send_email
    description: Send the reply.
    parameters:
      type: object
      properties:
        to: {type: string}
        subject: {type: string}
        body: {type: string}
      required: [to, subject, body]
`

// file builds a scenario file from a frontmatter and a body.
func file(front, body string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte("---\n" + strings.TrimLeft(front, "\n") + "---\n" + body)}
}

// baseFS is a small valid instruction tree; cases override single files.
func baseFS() fstest.MapFS {
	return fstest.MapFS{
		"main.md": {Data: []byte("Shared rules.\n")},
		"scenarios/alpha.md": file(`
name: alpha
description: Alpha applies to warranty questions with a serial.
version: 1.2.3
rules:
  serial: required
  keywords: [naprawa]
  priority: 5
available_functions:
  - name: check_warranty
    description: Check the warranty.
    parameters:
      type: object
      properties:
        serial_number: {type: string, minLength: 1}
      required: [serial_number]
      additionalProperties: false
`+sendEmail, "Alpha instructions.\n"),
		"scenarios/beta.md": file(`
name: beta
description: Beta is the fallback.
fallback: true
available_functions:
`+sendEmail, "Beta instructions.\n"),
	}
}

func TestLoadValid(t *testing.T) {
	set, err := instructions.LoadScenarios(baseFS(), routes)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if diff := cmp.Diff([]string{"alpha", "beta"}, set.Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	if set.Main != "Shared rules." {
		t.Errorf("Main = %q", set.Main)
	}
	alpha := set.Get("alpha")
	if alpha == nil {
		t.Fatal("Get(alpha) = nil")
	}
	if set.Get("nope") != nil {
		t.Error("Get(nope) != nil")
	}
	if fb := set.Fallback(); fb == nil || fb.Name != "beta" {
		t.Errorf("Fallback = %v, want beta", fb)
	}
	wantRules := instructions.Rules{Serial: "required", Keywords: []string{"naprawa"}, Priority: 5}
	if diff := cmp.Diff(wantRules, alpha.Rules); diff != "" {
		t.Errorf("Rules (-want +got):\n%s", diff)
	}
	if alpha.File != "scenarios/alpha.md" || alpha.Body != "Alpha instructions." || alpha.Version != "1.2.3" {
		t.Errorf("File/Body/Version = %q/%q/%q", alpha.File, alpha.Body, alpha.Version)
	}
	if alpha.Function("send_email") == nil || alpha.Function("create_ticket") != nil {
		t.Errorf("Function lookup wrong")
	}

	fn := alpha.Function("check_warranty")
	// Parameters are plain JSON values: they encode, and decode back equal.
	b, err := json.Marshal(fn.Parameters)
	if err != nil {
		t.Fatalf("parameters do not JSON-encode: %v", err)
	}
	wantParams := map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"serial_number": map[string]any{"type": "string", "minLength": float64(1)}},
		"required":             []any{"serial_number"},
		"additionalProperties": false,
	}
	if diff := cmp.Diff(wantParams, fn.Parameters); diff != "" {
		t.Errorf("Parameters (-want +got):\n%s\njson: %s", diff, b)
	}
	// The compiled schema is the one declared.
	for _, tc := range []struct {
		args  map[string]any
		valid bool
	}{
		{map[string]any{"serial_number": "SN1"}, true},
		{map[string]any{}, false},
		{map[string]any{"serial_number": ""}, false},
		{map[string]any{"serial_number": "SN1", "extra": "x"}, false},
		{map[string]any{"serial_number": 5.0}, false},
	} {
		err := fn.Schema.Validate(tc.args)
		if (err == nil) != tc.valid {
			t.Errorf("Validate(%v) = %v, want valid=%v", tc.args, err, tc.valid)
		}
	}
}

// TestLoadTolerates: editor artefacts and YAML scalar types that must not
// break a valid file.
func TestLoadTolerates(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		version string
	}{
		{"crlf", "---\r\nname: gamma\r\ndescription: d\r\nversion: 1.0.0\r\n---\r\nBody.\r\n", "1.0.0"},
		{"bom", "\ufeff---\nname: gamma\ndescription: d\n---\nBody.\n", ""},
		{"leading blank lines", "\n\n---\nname: gamma\ndescription: d\n---\nBody.\n", ""},
		{"float version", "---\nname: gamma\ndescription: d\nversion: 2.0\n---\nBody.\n", "2.0"},
		{"int version", "---\nname: gamma\ndescription: d\nversion: 3\n---\nBody.\n", "3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := baseFS()
			fsys["scenarios/gamma.md"] = &fstest.MapFile{Data: []byte(tc.data)}
			set, err := instructions.LoadScenarios(fsys, routes)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			g := set.Get("gamma")
			if g == nil || g.Body != "Body." || g.Version != tc.version {
				t.Errorf("gamma = %+v, want body %q version %q", g, "Body.", tc.version)
			}
		})
	}
}

// gamma makes a test edit that writes scenarios/gamma.md from a frontmatter
// and a body.
func gamma(front, body string) func(fstest.MapFS) {
	return func(f fstest.MapFS) { f["scenarios/gamma.md"] = file(front, body) }
}

// gammaHead is the name and description of a valid scenarios/gamma.md.
const gammaHead = "name: gamma\ndescription: d\n"

// declaring is a frontmatter: head, then available_functions declaring
// send_email and then more.
func declaring(head, more string) string {
	return head + "available_functions:\n" + sendEmail + more
}

// fn declares one more function, described "x", with the given parameters.
func fn(name, params string) string {
	return "\n  - name: " + name + "\n    description: x\n    parameters: " + params + "\n"
}

// serialFn declares check_warranty whose serial_number property has the
// given schema.
func serialFn(schema string) string {
	return "\n  - name: check_warranty\n    description: x\n    parameters:\n      type: object\n      properties:\n        serial_number: " + schema + "\n"
}

func TestLoadBroken(t *testing.T) {
	const gammaErr = "scenario: scenarios/gamma.md: "
	tests := []struct {
		name string
		edit func(fstest.MapFS)
		want []string // substrings of the error
	}{
		{"no main", func(f fstest.MapFS) { delete(f, "main.md") },
			[]string{"scenario: main.md:"}},
		{"empty main", func(f fstest.MapFS) { f["main.md"] = &fstest.MapFile{Data: []byte(" \n\n")} },
			[]string{"scenario: main.md: empty"}},
		{"no scenarios", func(f fstest.MapFS) { delete(f, "scenarios/alpha.md"); delete(f, "scenarios/beta.md") },
			[]string{"scenario: no scenario files"}},
		{"fallback not a reply language", func(f fstest.MapFS) {
			f["main.md"] = &fstest.MapFile{Data: []byte("---\nreplies:\n  pl: {from_name: Serwis, signature: Zespół}\nreplies_fallback: en\n---\nRules.\n")}
		}, []string{`scenario: main.md: replies_fallback: "en" is not a language listed under replies`}},
		{"no frontmatter", func(f fstest.MapFS) { f["scenarios/gamma.md"] = &fstest.MapFile{Data: []byte("Just text.\n")} },
			[]string{gammaErr + "frontmatter: missing"}},
		{"empty frontmatter", gamma("", "Body.\n"),
			[]string{gammaErr + "frontmatter: empty frontmatter"}},
		{"bad yaml", gamma("name: gamma\ndescription: [unclosed\n", "Body.\n"),
			[]string{gammaErr + "frontmatter: line 1: did not find expected"}},
		{"unknown key", gamma(declaring(gammaHead+"triger: gamma\n", ""), "Body.\n"),
			[]string{gammaErr + `frontmatter: line 3: unknown field "triger"; valid: asks_for, available_functions, complaint, declines_topic, description, `}},
		{"bad complaint", gamma(declaring(gammaHead+"complaint: sometimes\n", ""), "Body.\n"),
			[]string{gammaErr + `complaint: "sometimes" must be true, false or if_serial`}},
		{"unknown nested key", gamma(declaring(gammaHead+"rules:\n  serials: required\n", ""), "Body.\n"),
			[]string{gammaErr + `frontmatter: line 4: unknown field "serials" in rules; valid: keywords, priority, serial`}},
		{"wrong type, rest still validated", gamma(declaring("name: gamma\nrules:\n  keywords: naprawa\n", ""), "Body.\n"),
			[]string{gammaErr + `frontmatter: line 3: rules.keywords: want a list, got "naprawa"`, gammaErr + "description: missing"}},
		{"name mismatch", gamma(declaring("name: delta\ndescription: d\n", ""), "Body.\n"),
			[]string{gammaErr + `name: "delta" does not match the file name (want "gamma")`}},
		{"name missing", gamma(declaring("description: d\n", ""), "Body.\n"),
			[]string{gammaErr + "name: missing"}},
		{"description missing", gamma(declaring("name: gamma\n", ""), "Body.\n"),
			[]string{gammaErr + "description: missing"}},
		{"bad version", gamma(declaring(gammaHead+"version: two\n", ""), "Body.\n"),
			[]string{gammaErr + `version: "two"`}},
		{"empty body", gamma(declaring(gammaHead, ""), "\n  \n"),
			[]string{gammaErr + "body: empty"}},
		{"bad rules.serial", gamma(declaring(gammaHead+"rules:\n  serial: maybe\n", ""), "Body.\n"),
			[]string{gammaErr + `rules.serial: "maybe"`}},
		{"empty keyword", gamma(declaring(gammaHead+"rules:\n  keywords: [a, '', '?!']\n", ""), "Body.\n"),
			[]string{gammaErr + `rules.keywords[1]: "" has no letter or digit`, gammaErr + `rules.keywords[2]: "?!" has no letter or digit`}},
		{"unknown asks_for fact", gamma(declaring(gammaHead+"asks_for: [serial_number, invoice]\n", ""), "Body.\n"),
			[]string{gammaErr + `asks_for[1]: "invoice" is not a fact a reply can ask for (known: serial_number)`}},
		{"bad function name", gamma(declaring(gammaHead, fn("1bad-name", "{type: object}")), "Body.\n"),
			[]string{gammaErr + `available_functions[1].name: "1bad-name" must match`}},
		{"function description missing", gamma(declaring(gammaHead, "\n  - name: check_warranty\n    parameters: {type: object}\n"), "Body.\n"),
			[]string{gammaErr + "available_functions[1].description: missing"}},
		{"parameters missing", gamma(declaring(gammaHead, "\n  - name: check_warranty\n    description: x\n"), "Body.\n"),
			[]string{gammaErr + "available_functions[1].parameters: missing"}},
		{"parameters not an object", gamma(declaring(gammaHead, fn("check_warranty", "{type: string}")), "Body.\n"),
			[]string{gammaErr + `available_functions[1].parameters: type must be "object"`}},
		{"parameters do not compile", gamma(declaring(gammaHead, serialFn("{type: strnig}")), "Body.\n"),
			[]string{gammaErr + "available_functions[1].parameters:", "/properties/serial_number/type"}},
		{"external ref refused", gamma(declaring(gammaHead, serialFn(`{$ref: "file:///etc/passwd"}`)), "Body.\n"),
			[]string{gammaErr + "available_functions[1].parameters:", "not allowed"}},
		{"duplicate function", gamma(declaring(gammaHead, sendEmail), "Body.\n"),
			[]string{gammaErr + `available_functions[1].name: "send_email" already declared in available_functions[0]`}},
		{"no route", gamma(declaring(gammaHead, fn("delete_everything", "{type: object}")), "Body.\n"),
			[]string{gammaErr + `available_functions[1].name: "delete_everything" has no dispatcher route`}},
		{"a promised person nobody is told about", gamma(declaring(gammaHead+"promises_person: true\n", ""), "Body.\n"),
			[]string{gammaErr + "promises_person: the reply promises a person, so staff must be told first: declare notify_staff in available_functions"}},
		{"two fallbacks", gamma(declaring(gammaHead+"fallback: true\n", ""), "Body.\n"),
			[]string{gammaErr + "fallback: set in more than one file (scenarios/beta.md, scenarios/gamma.md)"}},
		{
			name: "two follow-up and two escalation scenarios",
			edit: func(f fstest.MapFS) {
				gamma(declaring(gammaHead+"followup: true\nescalate: true\n", ""), "Body.\n")(f)
				f["scenarios/delta.md"] = &fstest.MapFile{Data: []byte(strings.ReplaceAll(string(f["scenarios/gamma.md"].Data), "gamma", "delta"))}
			},
			want: []string{"scenarios/gamma.md: followup: set in more than one file (scenarios/delta.md, scenarios/gamma.md)",
				"scenarios/gamma.md: escalate: set in more than one file (scenarios/delta.md, scenarios/gamma.md)"},
		},
		{
			name: "every problem reported",
			edit: func(f fstest.MapFS) {
				gamma(declaring("name: gamma\nversion: x.y\n", fn("check_warranty", "{type: array}")), "")(f)
				f["scenarios/delta.md"] = &fstest.MapFile{Data: []byte("no frontmatter")}
				delete(f, "main.md")
			},
			want: []string{
				"scenario: main.md:",
				"scenario: scenarios/delta.md: frontmatter: missing",
				gammaErr + "description: missing",
				gammaErr + `version: "x.y"`,
				gammaErr + "body: empty",
				gammaErr + "available_functions[1].parameters:",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := baseFS()
			tc.edit(fsys)
			set, err := instructions.LoadScenarios(fsys, routes)
			if err == nil {
				t.Fatalf("Load succeeded (%v), want error containing %q", set.Names(), tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestLoadErrorsAreJoined(t *testing.T) {
	fsys := baseFS()
	fsys["scenarios/gamma.md"] = file("name: x\navailable_functions:\n"+sendEmail, "")
	_, err := instructions.LoadScenarios(fsys, routes)
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) {
		t.Fatalf("error %T is not a joined error: %v", err, err)
	}
	if got := len(joined.Unwrap()); got != 3 { // name, description, body
		t.Errorf("got %d errors, want 3:\n%v", got, err)
	}
}

// TestEmbeddedInstructions loads the instructions built into the binary.
func TestEmbeddedInstructions(t *testing.T) {
	set, err := instructions.LoadScenarios(embedded.FS, routes)
	if err != nil {
		t.Fatalf("Load(embedded.FS): %v", err)
	}
	wantNames := []string{"escalation", "follow-up", "graceful-degradation", "invalid-warranty", "missing-info", "out-of-scope", "product-question", "valid-warranty"}
	if diff := cmp.Diff(wantNames, set.Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	if fb := set.Fallback(); fb == nil || fb.Name != "graceful-degradation" {
		t.Errorf("Fallback = %v, want graceful-degradation", fb)
	}
	for _, phrase := range []string{"Do not sign", "reply_to", "send_email", "default_language"} {
		if !strings.Contains(set.Main, phrase) {
			t.Errorf("main.md does not mention %q", phrase)
		}
	}
	// The signature lives in main.md's frontmatter, for the pipeline, not in
	// the text the model reads.
	if strings.Contains(set.Main, "Zespół serwisu gwarancyjnego") || strings.Contains(set.Main, "replies:") {
		t.Errorf("main.md's text still carries the signature or the frontmatter")
	}
	wantReplies := map[string]instructions.ReplyStyle{
		"pl": {FromName: "Serwis gwarancyjny", Signature: "Zespół serwisu gwarancyjnego"},
		"en": {FromName: "Warranty Service", Signature: "Warranty Support Team"},
		"de": {FromName: "Garantieservice", Signature: "Ihr Garantieservice-Team"},
	}
	// Every default language has a style, so a reply in it is signed in it;
	// each language's AI disclosure says, in its own words, that an AI
	// assistant wrote the reply.
	words := map[string]string{"pl": "asystent AI", "en": "AI assistant", "de": "KI-Assistent", "fr": "assistant IA",
		"es": "asistente de IA", "it": "assistente IA", "cs": "umělou inteligencí", "uk": "штучним інтелектом",
		"ru": "искусственным интеллектом", "et": "tehisintellektil", "ja": "AIアシスタント", "ko": "AI 어시스턴트", "zh": "AI助手"}
	if diff := cmp.Diff(slices.Sorted(maps.Keys(words)), slices.Sorted(maps.Keys(set.Replies))); diff != "" {
		t.Errorf("languages with a style (-want +got):\n%s", diff)
	}
	for lang, word := range words {
		st := set.Replies[lang]
		if !strings.Contains(st.Disclosure, word) || strings.Contains(set.Main, st.Disclosure) {
			t.Errorf("%s: disclosure %q, want it to name %q, in the frontmatter only", lang, st.Disclosure, word)
		}
		if st.FromName == "" || st.Signature == "" {
			t.Errorf("%s: style %+v, want a From name and a signature", lang, st)
		}
		if _, ok := wantReplies[lang]; !ok {
			delete(set.Replies, lang)
			continue
		}
		st.Disclosure = ""
		set.Replies[lang] = st
	}
	if diff := cmp.Diff(wantReplies, set.Replies); diff != "" {
		t.Errorf("Replies (-want +got):\n%s", diff)
	}
	if set.RepliesFallback != "en" {
		t.Errorf("RepliesFallback = %q, want en", set.RepliesFallback)
	}

	type summary struct {
		Functions []string
		Serial    string
		Priority  int
		Keywords  bool
		Fallback  bool
		Escalate  bool
		FollowUp  bool
		Promises  bool
	}
	got := map[string]summary{}
	for _, sc := range set.Scenarios {
		var fns []string
		for _, f := range sc.Functions {
			fns = append(fns, f.Name)
			if f.Schema == nil {
				t.Errorf("%s: %s: no compiled schema", sc.Name, f.Name)
			}
		}
		got[sc.Name] = summary{fns, sc.Rules.Serial, sc.Rules.Priority, len(sc.Rules.Keywords) > 0, sc.Fallback, sc.Escalate, sc.FollowUp, sc.PromisesPerson}
		if !strings.Contains(sc.Body, "<objective>") {
			t.Errorf("%s: body has no <objective>", sc.Name)
		}
	}
	want := map[string]summary{
		"valid-warranty":       {[]string{"check_warranty", "create_ticket", "send_email"}, "required", 10, false, false, false, false, false},
		"invalid-warranty":     {[]string{"check_warranty", "create_ticket", "send_email"}, "required", 20, true, false, false, false, false},
		"missing-info":         {[]string{"send_email"}, "absent", 10, true, false, false, false, false},
		"graceful-degradation": {[]string{"notify_staff", "send_email"}, "", 0, false, true, false, false, true},
		"out-of-scope":         {[]string{"send_email"}, "", 0, false, false, false, false, false},
		"escalation":           {[]string{"notify_staff", "send_email"}, "", 50, true, false, true, false, false},
		"follow-up":            {[]string{"notify_staff", "send_email"}, "", 0, false, false, false, true, true},
		"product-question":     {[]string{"search_manual", "send_email"}, "absent", 12, true, false, false, false, false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scenarios (-want +got):\n%s", diff)
	}

	// The declared send_email schema accepts a real reply and refuses junk.
	send := set.Get("valid-warranty").Function("send_email")
	if err := send.Schema.Validate(map[string]any{"to": "a@example.com", "subject": "Re: x", "body": "Dzień dobry"}); err != nil {
		t.Errorf("send_email schema refuses a valid call: %v", err)
	}
	if err := send.Schema.Validate(map[string]any{"to": "a@example.com", "subject": "Re: x", "body": "b", "cc": "evil@example.net"}); err == nil {
		t.Errorf("send_email schema accepts an extra cc argument")
	}
}
