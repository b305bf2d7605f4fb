package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMakeBuildDetectsAsTested: the binary `make build` links (lingua-go
// with only the language models triage reads) names the same language for
// each email as the one `go build` links (every model, as the tests run
// it): the 13 default languages and three neighbours, under a subject that
// is only a serial number. Without the bigram and unigram models a
// trigram lingua does not know falls back to, the Spanish email came out
// German, a confident wrong language.
func TestMakeBuildDetectsAsTested(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary with make")
	}
	dir := t.TempDir()
	trimmed := shippedBinary(t)
	if err := os.WriteFile(filepath.Join(dir, "warranty.csv"), []byte(warrantyCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	var files []string
	for i, text := range languageTexts {
		files = append(files, fmt.Sprintf("%02d.eml", i))
		raw := fmt.Sprintf("From: Klient %d <klient%d@customer.example>\r\nTo: serwis@example.com\r\nSubject: SN-48213-PL\r\n"+
			"Message-ID: <make-%d@customer.example>\r\nDate: Mon, 16 Nov 2026 09:12:44 +0100\r\n"+
			"Content-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n", i, i, i, text)
		if err := os.WriteFile(filepath.Join(dir, files[i]), []byte(raw), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	languages := func(bin, state string) map[string]string {
		if err := os.Mkdir(filepath.Join(dir, state), 0o755); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"process", "--json", "--offline", "--warranty-csv", "warranty.csv",
			"--tickets-db", filepath.Join(state, "tickets.db"), "--outbox", filepath.Join(state, "outbox")}, files...)
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s process: %v\n%s", bin, err, stderr.String())
		}
		got := map[string]string{}
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var o struct{ File, Language string }
			if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
				t.Fatalf("%s process: line %q: %v", bin, sc.Text(), err)
			}
			got[o.File] = o.Language
		}
		if len(got) != len(files) {
			t.Fatalf("%s process: %d outcomes for %d emails:\n%s", bin, len(got), len(files), out)
		}
		return got
	}
	want := languages(triageBinary(t), "go-build")
	got := languages(trimmed, "make-build")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("languages of the make build (+) differ from the go build's (-):\n%s", diff)
	}
	if want["04.eml"] == "de" {
		t.Errorf("the Spanish email is German: %v", want)
	}
}
