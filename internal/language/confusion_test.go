package language

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// mail is one text of testdata/mails: the language it is written in, and
// whether it is short (a subject or a one-line message).
type mail struct {
	lang, text string
	short      bool
}

// ShortMail is the length under which a test mail counts as short.
const shortMail = 60

// loadMails reads testdata/mails/<code>.txt: one mail a line, synthetic
// warranty-desk messages in 20 languages, short and long.
func loadMails(t testing.TB) []mail {
	t.Helper()
	files, err := filepath.Glob("testdata/mails/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("testdata/mails: %v (%d files)", err, len(files))
	}
	var mails []mail
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lang := strings.TrimSuffix(filepath.Base(f), ".txt")
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				mails = append(mails, mail{lang: lang, text: l, short: utf8.RuneCountInString(l) < shortMail})
			}
		}
	}
	return mails
}

// confusion counts, per true language, what Judge answered: a configured
// language it was sure of, or "default" when it fell back.
type confusion map[string]map[string]int

func (c confusion) add(truth, got string) {
	if c[truth] == nil {
		c[truth] = map[string]int{}
	}
	c[truth][got]++
}

func (c confusion) String() string {
	var cols []string
	for _, row := range c {
		for k := range row {
			if !slices.Contains(cols, k) {
				cols = append(cols, k)
			}
		}
	}
	slices.Sort(cols)
	var b strings.Builder
	fmt.Fprintf(&b, "%-5s", "true")
	for _, k := range cols {
		fmt.Fprintf(&b, " %7s", k)
	}
	b.WriteString("\n")
	for _, truth := range slices.Sorted(func(yield func(string) bool) {
		for k := range c {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Fprintf(&b, "%-5s", truth)
		for _, k := range cols {
			fmt.Fprintf(&b, " %7d", c[truth][k])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestConfusion runs the detector over testdata/mails (320 mails in 20
// languages: the 13 default ones and 7 outside them) and prints the
// confusion table, detected against true language, a fallback to the
// default counted as "default". No mail may get a configured language it
// is not written in; every long mail in a configured language must be
// told.
func TestConfusion(t *testing.T) {
	d, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	mails := loadMails(t)
	if len(mails) < 300 {
		t.Fatalf("%d test mails, want at least 300", len(mails))
	}
	short, long := confusion{}, confusion{}
	var told, inSet int
	for _, m := range mails {
		r := d.Judge(m.text)
		got := "default"
		if r.Sure {
			got = r.Code
		}
		if m.short {
			short.add(m.lang, got)
		} else {
			long.add(m.lang, got)
		}
		if d.Knows(m.lang) {
			inSet++
			if r.Sure && r.Code == m.lang {
				told++
			}
		}
		switch {
		case r.Sure && r.Code != m.lang:
			t.Errorf("confident wrong language: %q (%s) detected as %s (%.3f)", m.text, m.lang, r.Code, r.Confidence)
		case !r.Sure && r.Code != d.Default():
			t.Errorf("%q: not sure, yet %s and not the default %s", m.text, r.Code, d.Default())
		case !m.short && d.Knows(m.lang) && !r.Sure:
			t.Errorf("long mail in a configured language not told: %q (%s), guess %s (%.3f)", m.text, m.lang, r.Guess, r.Confidence)
		}
	}
	t.Logf("%d mails; of the %d in a configured language %d told, the rest the default\nshort mails (under %d characters):\n%s\nlong mails:\n%s",
		len(mails), inSet, told, shortMail, short, long)
}
