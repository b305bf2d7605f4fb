package instructions_test

import (
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"triage/internal/instructions"
)

// TestBasicExamplesLoad loads the two example scenario files in the basic
// format in testdata/basic, `trigger:` included, unchanged.
func TestBasicExamplesLoad(t *testing.T) {
	set, err := instructions.LoadScenarios(os.DirFS("testdata/basic"), []string{"check_warranty", "create_ticket", "send_email"})
	if err != nil {
		t.Fatalf("the basic-format example files must load unchanged: %v", err)
	}
	var got []string
	for _, sc := range set.Scenarios {
		var fns []string
		for _, f := range sc.Functions {
			fns = append(fns, f.Name)
		}
		got = append(got, sc.Name+" trigger="+sc.Trigger+" version="+sc.Version+" functions="+strings.Join(fns, ","))
	}
	want := []string{
		"missing-info trigger=missing-info version=2.0.0 functions=send_email",
		"valid-warranty trigger=valid-warranty version=2.0.0 functions=check_warranty,create_ticket,send_email",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("loaded (-want +got):\n%s", diff)
	}
}

func TestTriggerMustBeTheName(t *testing.T) {
	file := "---\nname: missing-info\ndescription: d\ntrigger: no-serial\navailable_functions:\n  - name: send_email\n    description: d\n    parameters: {type: object, properties: {to: {type: string}}}\n---\nBody.\n"
	fsys := fstest.MapFS{
		"main.md":                   {Data: []byte("rules")},
		"scenarios/missing-info.md": {Data: []byte(file)},
	}
	_, err := instructions.LoadScenarios(fsys, []string{"send_email"})
	if err == nil || !strings.Contains(err.Error(), `scenarios/missing-info.md: trigger: "no-serial" must equal name "missing-info"`) {
		t.Errorf("err = %v, want a trigger error naming the file, the trigger and the name", err)
	}
}

func TestMainFrontmatterReplies(t *testing.T) {
	scen := "---\nname: a\ndescription: d\navailable_functions:\n  - name: send_email\n    description: d\n    parameters: {type: object}\n---\nBody.\n"
	load := func(main string) error {
		_, err := instructions.LoadScenarios(fstest.MapFS{"main.md": {Data: []byte(main)}, "scenarios/a.md": {Data: []byte(scen)}}, nil)
		return err
	}
	if err := load("---\nreplies:\n  en: {signature: Team}\n---\nRules.\n"); err != nil {
		t.Errorf("valid frontmatter: %v", err)
	}
	err := load("---\nreplies:\n  english: {signatur: Team, from_name: \"A <b>\"}\n---\n")
	for _, want := range []string{`line 2: unknown field "signatur" in replies.english; valid: disclosure, from_name, signature`,
		"replies.english: not a language code", "replies.english.from_name", "main.md: empty after the frontmatter"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to contain %q", err, want)
		}
	}
	// Every language listed has its AI disclosure when one has, each one line.
	if err := load("---\nreplies:\n  en: {signature: Team, disclosure: An AI wrote this.}\n  pl: {signature: Zespół, disclosure: Napisało to AI.}\n---\nRules.\n"); err != nil {
		t.Errorf("disclosures: %v", err)
	}
	err = load("---\nreplies:\n  en: {signature: Team, disclosure: An AI wrote this.}\n  pl: {signature: Zespół}\n  de: {signature: Team, disclosure: \"Eine KI.\\nZweite Zeile.\"}\n---\nRules.\n")
	for _, want := range []string{"replies.pl.disclosure: missing (de, en have one)", "replies.de.disclosure: must be one line"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to contain %q", err, want)
		}
	}
}

// With an error, Load returns the files that loaded cleanly, so checks
// across files can still report their problems in the same run.
func TestLoadReturnsCleanFilesWithAnError(t *testing.T) {
	good := "---\nname: good\ndescription: d\navailable_functions:\n  - name: send_email\n    description: d\n    parameters: {type: object}\n---\nBody.\n"
	bad := "---\nname: bad\ndescription: [unclosed\n---\nBody.\n"
	set, err := instructions.LoadScenarios(fstest.MapFS{"main.md": {Data: []byte("rules")}, "scenarios/good.md": {Data: []byte(good)}, "scenarios/bad.md": {Data: []byte(bad)}}, nil)
	if err == nil || !strings.Contains(err.Error(), "scenarios/bad.md") {
		t.Fatalf("err = %v", err)
	}
	if set == nil || len(set.Scenarios) != 1 || set.Scenarios[0].Name != "good" {
		t.Errorf("partial set = %+v, want only good", set)
	}
}
