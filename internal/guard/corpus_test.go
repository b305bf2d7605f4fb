package guard

import (
	"path/filepath"
	"strings"
	"testing"

	"triage/internal/testkit/corpustest"
)

// TestCorpusSample runs the sample in testdata/corpus through Check: one
// file per kind of mail a public corpus showed answered or wrongly skipped,
// named "<class>--<name>.eml". Every class but "person" is a machine or
// spam and must be skipped; a person must be answered. The log lists, per
// class, how many of its files would be answered.
func TestCorpusSample(t *testing.T) {
	var tally corpustest.Tally
	for _, f := range corpustest.Files(t, filepath.Join("testdata", "corpus")) {
		base := strings.TrimSuffix(filepath.Base(f), ".eml")
		class, ok := corpustest.Class(f)
		if !ok {
			t.Errorf("%s: name is not <class>--<name>.eml", f)
			continue
		}
		v := Check(cfg, parseFile(t, f))
		tally.Add(class, !v.Skip)
		switch person := class == corpustest.Person; {
		case person && v.Skip:
			t.Errorf("%s: a person's mail skipped (%s: %s)", base, v.Reason, v.Detail)
		case !person && !v.Skip:
			t.Errorf("%s: %s mail answered", base, class)
		}
	}
	t.Log(tally.String())
}
