package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gomail "github.com/emersion/go-message/mail"

	embedded "triage/instructions"
	"triage/internal/instructions"
)

// readBody returns the text of a written .eml file and its To addresses.
func readBody(t *testing.T, file string) (string, []string) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := gomail.CreateReader(f)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	to, _ := r.Header.AddressList("To")
	var addrs []string
	for _, a := range to {
		addrs = append(addrs, a.Address)
	}
	p, err := r.NextPart()
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	b, err := io.ReadAll(p.Body)
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b), "\r\n", "\n"), addrs
}

// Every reply and draft `triage process` writes over the sample inbox
// carries main.md's AI disclosure exactly once, in the customer's language
// (the language of its signature: replies_fallback for one main.md does not
// list), on its own line just above the signature; staff notices carry
// none. --ai-disclosure=false leaves it out of every reply, the signature
// kept.
func TestProcessRepliesDiscloseAI(t *testing.T) {
	set, err := instructions.LoadScenarios(embedded.FS, nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("../../examples/inbox/*.eml")
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	const staff = "kierownik@example.com"
	run := func(extra ...string) (string, map[string]string) {
		t.Helper()
		dir := t.TempDir()
		outbox := filepath.Join(dir, "outbox")
		args := append([]string{"process", "--json", "--warranty-csv", "../../examples/warranty.csv", "--tickets-db", filepath.Join(dir, "t.db"),
			"--outbox", outbox, "--staff", staff}, extra...)
		code, stdout, stderr := runCLI(t, "", append(args, files...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, stderr)
		}
		langs := map[string]string{} // reply file: the customer's language
		for _, o := range decodeOutcomes(t, stdout) {
			if o.Reply != nil && o.Reply.Path != "" {
				langs[o.Reply.Path] = o.Language
			}
		}
		if len(langs) < 8 {
			t.Fatalf("%v: %d replies written", extra, len(langs))
		}
		return outbox, langs
	}
	count := func(body string) map[string]int {
		n := map[string]int{}
		for lang, st := range set.Replies {
			n[lang] = strings.Count(body, st.Disclosure)
		}
		return n
	}
	for _, mode := range []string{"send", "draft"} {
		outbox, langs := run("--reply-mode", mode)
		seen := map[string]bool{}
		for path, lang := range langs {
			if mode == "draft" && filepath.Base(filepath.Dir(path)) != "drafts" {
				t.Errorf("draft mode wrote %s outside drafts/", path)
			}
			style, ok := set.Replies[lang]
			if !ok {
				lang, style = set.RepliesFallback, set.Replies[set.RepliesFallback]
			}
			seen[lang] = true
			body, _ := readBody(t, path)
			for other, n := range count(body) {
				if want := map[bool]int{true: 1}[other == lang]; n != want {
					t.Errorf("%s (%s, %s): the %s disclosure %d times, want %d:\n%s", filepath.Base(path), mode, lang, other, n, want, body)
				}
			}
			if want := "\n\n" + style.Disclosure + "\n\n" + style.Signature + "\n"; !strings.HasSuffix(body, want) {
				t.Errorf("%s (%s): does not end with the disclosure and the signature %q:\n%s", filepath.Base(path), mode, want, body)
			}
		}
		if !seen["pl"] || !seen["en"] {
			t.Errorf("%s: replies in %v, want Polish and English ones", mode, seen)
		}
		notices, _ := filepath.Glob(filepath.Join(outbox, "*.eml"))
		staffed := 0
		for _, f := range notices {
			body, to := readBody(t, f)
			if len(to) != 1 || to[0] != staff {
				continue
			}
			staffed++
			for lang, n := range count(body) {
				if n != 0 {
					t.Errorf("staff notice %s carries the %s disclosure:\n%s", filepath.Base(f), lang, body)
				}
			}
		}
		if staffed == 0 {
			t.Errorf("%s: no staff notice written", mode)
		}
	}

	_, langs := run("--ai-disclosure=false")
	for path := range langs {
		body, _ := readBody(t, path)
		for lang, n := range count(body) {
			if n != 0 {
				t.Errorf("--ai-disclosure=false: %s carries the %s disclosure:\n%s", filepath.Base(path), lang, body)
			}
		}
		if !strings.HasSuffix(body, "\n\nZespół serwisu gwarancyjnego\n") && !strings.HasSuffix(body, "\n\nWarranty Support Team\n") && !strings.HasSuffix(body, "\n\nIhr Garantieservice-Team\n") {
			t.Errorf("--ai-disclosure=false: %s is not signed:\n%s", filepath.Base(path), body)
		}
	}
}
