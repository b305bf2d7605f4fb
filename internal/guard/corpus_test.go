package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"triage/internal/message"
)

// TestCorpusSample runs the sample in testdata/corpus through Check: one
// file per kind of mail a public corpus showed answered or wrongly skipped,
// named "<class>--<name>.eml". Every class but "person" is a machine or
// spam and must be skipped; a person must be answered. The log lists, per
// class, how many of its files would be answered.
func TestCorpusSample(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.eml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus sample: %v", err)
	}
	answered, total := map[string]int{}, map[string]int{}
	for _, f := range files {
		base := strings.TrimSuffix(filepath.Base(f), ".eml")
		class, _, ok := strings.Cut(base, "--")
		if !ok {
			t.Errorf("%s: name is not <class>--<name>.eml", f)
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := message.Parse(raw)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		v := Check(cfg, m)
		total[class]++
		if !v.Skip {
			answered[class]++
		}
		switch person := class == "person"; {
		case person && v.Skip:
			t.Errorf("%s: a person's mail skipped (%s: %s)", base, v.Reason, v.Detail)
		case !person && !v.Skip:
			t.Errorf("%s: %s mail answered", base, class)
		}
	}
	classes := make([]string, 0, len(total))
	for c := range total {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	var b strings.Builder
	for _, c := range classes {
		fmt.Fprintf(&b, "%s %d/%d answered; ", c, answered[c], total[c])
	}
	t.Log(b.String())
}
