package scenario_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"triage/instructions"
	"triage/internal/scenario"
)

var routes = []string{"check_warranty", "create_ticket", "send_email"}

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
	set, err := scenario.Load(baseFS(), routes)
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
	wantRules := scenario.Rules{Serial: "required", Keywords: []string{"naprawa"}, Priority: 5}
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
			set, err := scenario.Load(fsys, routes)
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

func TestLoadBroken(t *testing.T) {
	tests := []struct {
		name string
		edit func(fstest.MapFS)
		want []string // substrings of the error
	}{
		{
			name: "no main",
			edit: func(f fstest.MapFS) { delete(f, "main.md") },
			want: []string{"scenario: main.md:"},
		},
		{
			name: "empty main",
			edit: func(f fstest.MapFS) { f["main.md"] = &fstest.MapFile{Data: []byte(" \n\n")} },
			want: []string{"scenario: main.md: empty"},
		},
		{
			name: "no scenarios",
			edit: func(f fstest.MapFS) { delete(f, "scenarios/alpha.md"); delete(f, "scenarios/beta.md") },
			want: []string{"scenario: no scenario files"},
		},
		{
			name: "no frontmatter",
			edit: func(f fstest.MapFS) {
				f["scenarios/gamma.md"] = &fstest.MapFile{Data: []byte("Just text.\n")}
			},
			want: []string{"scenario: scenarios/gamma.md: frontmatter: missing"},
		},
		{
			name: "empty frontmatter",
			edit: func(f fstest.MapFS) { f["scenarios/gamma.md"] = file("", "Body.\n") },
			want: []string{"scenario: scenarios/gamma.md: frontmatter: empty frontmatter"},
		},
		{
			name: "bad yaml",
			edit: func(f fstest.MapFS) {
				f["scenarios/gamma.md"] = file("name: gamma\ndescription: [unclosed\n", "Body.\n")
			},
			want: []string{"scenario: scenarios/gamma.md: frontmatter: yaml:"},
		},
		{
			name: "unknown key",
			edit: func(f fstest.MapFS) {
				f["scenarios/gamma.md"] = file("name: gamma\ndescription: d\ntrigger: gamma\navailable_functions:\n"+sendEmail, "Body.\n")
			},
			want: []string{"scenario: scenarios/gamma.md: frontmatter: line 3: field trigger not found in type scenario.Scenario"},
		},
		{
			name: "unknown nested key",
			edit: func(f fstest.MapFS) {
				f["scenarios/gamma.md"] = file("name: gamma\ndescription: d\nrules:\n  serials: required\navailable_functions:\n"+sendEmail, "Body.\n")
			},
			want: []string{"scenario: scenarios/gamma.md: frontmatter: line 4: field serials not found in type scenario.Rules"},
		},
		{
			name: "wrong type, rest still validated",
			edit: func(f fstest.MapFS) {
				f["scenarios/gamma.md"] = file("name: gamma\nrules:\n  keywords: naprawa\navailable_functions:\n"+sendEmail, "Body.\n")
			},
			want: []string{
				"scenario: scenarios/gamma.md: frontmatter: line 3: cannot unmarshal !!str `naprawa` into []string",
				"scenario: scenarios/gamma.md: description: missing",
			},
		},
		{
			name: "name mismatch",
			edit: func(f fstest.MapFS) {
				f["scenarios/gamma.md"] = file("name: delta\ndescription: d\navailable_functions:\n"+sendEmail, "Body.\n")
			},
			want: []string{`scenario: scenarios/gamma.md: name: "delta" does not match the file name (want "gamma")`},
		},
		{
			name: "name missing",
			edit: func(f fstest.MapFS) {
				f["scenarios/gamma.md"] = file("description: d\navailable_functions:\n"+sendEmail, "Body.\n")
			},
			want: []string{"scenario: scenarios/gamma.md: name: missing"},
		},
		{
			name: "description missing",
			edit: func(f fstest.MapFS) {
				f["scenarios/gamma.md"] = file("name: gamma\navailable_functions:\n"+sendEmail, "Body.\n")
			},
			want: []string{"scenario: scenarios/gamma.md: description: missing"},
		},
		{
			name: "bad version",
			edit: func(f fstest.MapFS) {
				f["scenarios/gamma.md"] = file("name: gamma\ndescription: d\nversion: two\navailable_functions:\n"+sendEmail, "Body.\n")
			},
			want: []string{`scenario: scenarios/gamma.md: version: "two"`},
		},
		{
			name: "empty body",
			edit: func(f fstest.MapFS) {
				f["scenarios/gamma.md"] = file("name: gamma\ndescription: d\navailable_functions:\n"+sendEmail, "\n  \n")
			},
			want: []string{"scenario: scenarios/gamma.md: body: empty"},
		},
		{
			name: "bad rules.serial",
			edit: func(f fstest.MapFS) {
				f["scenarios/gamma.md"] = file("name: gamma\ndescription: d\nrules:\n  serial: maybe\navailable_functions:\n"+sendEmail, "Body.\n")
			},
			want: []string{`scenario: scenarios/gamma.md: rules.serial: "maybe"`},
		},
		{
			name: "empty keyword",
			edit: func(f fstest.MapFS) {
				f["scenarios/gamma.md"] = file("name: gamma\ndescription: d\nrules:\n  keywords: [a, '', '?!']\navailable_functions:\n"+sendEmail, "Body.\n")
			},
			want: []string{
				`scenario: scenarios/gamma.md: rules.keywords[1]: "" has no letter or digit`,
				`scenario: scenarios/gamma.md: rules.keywords[2]: "?!" has no letter or digit`,
			},
		},
		{
			name: "bad function name",
			edit: func(f fstest.MapFS) {
				f["scenarios/gamma.md"] = file("name: gamma\ndescription: d\navailable_functions:\n"+sendEmail+`
  - name: 1bad-name
    description: x
    parameters: {type: object}
`, "Body.\n")
			},
			want: []string{`scenario: scenarios/gamma.md: available_functions[1].name: "1bad-name" must match`},
		},
		{
			name: "function description missing",
			edit: func(f fstest.MapFS) {
				f["scenarios/gamma.md"] = file("name: gamma\ndescription: d\navailable_functions:\n"+sendEmail+`
  - name: check_warranty
    parameters: {type: object}
`, "Body.\n")
			},
			want: []string{"scenario: scenarios/gamma.md: available_functions[1].description: missing"},
		},
		{
			name: "parameters missing",
			edit: func(f fstest.MapFS) {
				f["scenarios/gamma.md"] = file("name: gamma\ndescription: d\navailable_functions:\n"+sendEmail+`
  - name: check_warranty
    description: x
`, "Body.\n")
			},
			want: []string{"scenario: scenarios/gamma.md: available_functions[1].parameters: missing"},
		},
		{
			name: "parameters not an object",
			edit: func(f fstest.MapFS) {
				f["scenarios/gamma.md"] = file("name: gamma\ndescription: d\navailable_functions:\n"+sendEmail+`
  - name: check_warranty
    description: x
    parameters: {type: string}
`, "Body.\n")
			},
			want: []string{`scenario: scenarios/gamma.md: available_functions[1].parameters: type must be "object"`},
		},
		{
			name: "parameters do not compile",
			edit: func(f fstest.MapFS) {
				f["scenarios/gamma.md"] = file("name: gamma\ndescription: d\navailable_functions:\n"+sendEmail+`
  - name: check_warranty
    description: x
    parameters:
      type: object
      properties:
        serial_number: {type: strnig}
`, "Body.\n")
			},
			want: []string{"scenario: scenarios/gamma.md: available_functions[1].parameters:", "/properties/serial_number/type"},
		},
		{
			name: "external ref refused",
			edit: func(f fstest.MapFS) {
				f["scenarios/gamma.md"] = file("name: gamma\ndescription: d\navailable_functions:\n"+sendEmail+`
  - name: check_warranty
    description: x
    parameters:
      type: object
      properties:
        serial_number: {$ref: "file:///etc/passwd"}
`, "Body.\n")
			},
			want: []string{"scenario: scenarios/gamma.md: available_functions[1].parameters:", "not allowed"},
		},
		{
			name: "duplicate function",
			edit: func(f fstest.MapFS) {
				f["scenarios/gamma.md"] = file("name: gamma\ndescription: d\navailable_functions:\n"+sendEmail+sendEmail, "Body.\n")
			},
			want: []string{`scenario: scenarios/gamma.md: available_functions[1].name: "send_email" already declared in available_functions[0]`},
		},
		{
			name: "no route",
			edit: func(f fstest.MapFS) {
				f["scenarios/gamma.md"] = file("name: gamma\ndescription: d\navailable_functions:\n"+sendEmail+`
  - name: delete_everything
    description: x
    parameters: {type: object}
`, "Body.\n")
			},
			want: []string{`scenario: scenarios/gamma.md: available_functions[1].name: "delete_everything" has no dispatcher route`},
		},
		{
			name: "two fallbacks",
			edit: func(f fstest.MapFS) {
				f["scenarios/gamma.md"] = file("name: gamma\ndescription: d\nfallback: true\navailable_functions:\n"+sendEmail, "Body.\n")
			},
			want: []string{"scenario: scenarios/gamma.md: fallback: set in more than one file (scenarios/beta.md, scenarios/gamma.md)"},
		},
		{
			name: "every problem reported",
			edit: func(f fstest.MapFS) {
				f["scenarios/gamma.md"] = file("name: gamma\nversion: x.y\navailable_functions:\n"+sendEmail+`
  - name: check_warranty
    description: x
    parameters: {type: array}
`, "")
				f["scenarios/delta.md"] = &fstest.MapFile{Data: []byte("no frontmatter")}
				delete(f, "main.md")
			},
			want: []string{
				"scenario: main.md:",
				"scenario: scenarios/delta.md: frontmatter: missing",
				"scenario: scenarios/gamma.md: description: missing",
				`scenario: scenarios/gamma.md: version: "x.y"`,
				"scenario: scenarios/gamma.md: body: empty",
				"scenario: scenarios/gamma.md: available_functions[1].parameters:",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := baseFS()
			tc.edit(fsys)
			set, err := scenario.Load(fsys, routes)
			if err == nil {
				t.Fatalf("Load succeeded (%v), want error containing %q", set.Names(), tc.want)
			}
			if set != nil {
				t.Errorf("Load returned a Set with an error")
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
	_, err := scenario.Load(fsys, routes)
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
	set, err := scenario.Load(instructions.FS, routes)
	if err != nil {
		t.Fatalf("Load(instructions.FS): %v", err)
	}
	wantNames := []string{"graceful-degradation", "invalid-warranty", "missing-info", "out-of-scope", "valid-warranty"}
	if diff := cmp.Diff(wantNames, set.Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	if fb := set.Fallback(); fb == nil || fb.Name != "graceful-degradation" {
		t.Errorf("Fallback = %v, want graceful-degradation", fb)
	}
	for _, phrase := range []string{"Zespół serwisu gwarancyjnego", "reply_to", "send_email", "Polish"} {
		if !strings.Contains(set.Main, phrase) {
			t.Errorf("main.md does not mention %q", phrase)
		}
	}

	type summary struct {
		Functions []string
		Serial    string
		Priority  int
		Keywords  bool
		Fallback  bool
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
		got[sc.Name] = summary{fns, sc.Rules.Serial, sc.Rules.Priority, len(sc.Rules.Keywords) > 0, sc.Fallback}
		if !strings.Contains(sc.Body, "<objective>") {
			t.Errorf("%s: body has no <objective>", sc.Name)
		}
	}
	want := map[string]summary{
		"valid-warranty":       {[]string{"check_warranty", "create_ticket", "send_email"}, "required", 10, false, false},
		"invalid-warranty":     {[]string{"check_warranty", "send_email"}, "required", 20, true, false},
		"missing-info":         {[]string{"send_email"}, "absent", 10, true, false},
		"graceful-degradation": {[]string{"send_email"}, "", 0, false, true},
		"out-of-scope":         {[]string{"send_email"}, "", 0, false, false},
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
