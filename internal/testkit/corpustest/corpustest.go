// Package corpustest reads the guard's corpus sample
// (internal/guard/testdata/corpus) for the tests that run it: one file per
// kind of mail, named "<class>--<name>.eml", where every class but
// "person" is a machine or spam; and it tallies, per class, how many of
// the files were answered.
package corpustest

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Person is the class of the mail a person wrote: the one class answered.
const Person = "person"

// Files lists the sample's files in dir; t fails when there is none.
func Files(t testing.TB, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.eml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus sample: %v", err)
	}
	return files
}

// Class is the class of the sample file path, and false when its name is
// not "<class>--<name>.eml".
func Class(path string) (string, bool) {
	class, _, ok := strings.Cut(strings.TrimSuffix(filepath.Base(path), ".eml"), "--")
	return class, ok
}

// Tally counts, per class, the files and those answered.
type Tally struct {
	answered, total map[string]int
}

// Add counts one file of class, answered or not.
func (t *Tally) Add(class string, answered bool) {
	if t.total == nil {
		t.answered, t.total = map[string]int{}, map[string]int{}
	}
	t.total[class]++
	if answered {
		t.answered[class]++
	}
}

// String lists, by class, how many were answered: "person 3/3 answered; ".
func (t *Tally) String() string {
	var b strings.Builder
	for _, c := range slices.Sorted(maps.Keys(t.total)) {
		fmt.Fprintf(&b, "%s %d/%d answered; ", c, t.answered[c], t.total[c])
	}
	return b.String()
}
