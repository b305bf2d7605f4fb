// Package manuals serves a directory of product manuals as an MCP server
// (built on the official Go SDK) with one tool, search_manual, that returns
// the manual section best matching a query. It is the knowledge base behind
// the product-question scenario; `triage mcp-manuals DIR` runs it over stdio.
//
// A manual is a Markdown or text file: its first "# " heading is the
// manual's title, every "## " heading starts a section. Matching is by
// words, case- and diacritics-insensitive, with a word matching its longer
// forms ("descale" finds "descaling", "reset" finds "resetting").
package manuals

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"sort"
	"strings"
	"unicode"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/text/unicode/norm"

	"triage/internal/clip"
)

// Limits on what is loaded and answered.
const (
	maxFiles        = 200
	maxFileBytes    = 1 << 20
	maxQueryBytes   = 500
	maxSectionBytes = 4000 // a longer section is cut in the answer
)

// Section is one "## " section of a manual.
type Section struct {
	File    string `json:"file"`    // base name of the manual file
	Manual  string `json:"manual"`  // the manual's title
	Heading string `json:"section"` // the section's heading
	Text    string `json:"text"`    // the section's body

	words map[string]int // folded words of manual title, heading and body -> weight
}

// Library is a loaded manuals directory. It is read-only after Load.
type Library struct {
	sections []*Section
	df       map[string]int // words -> number of sections holding them
}

// Load reads every *.md and *.txt file of dir.
func Load(dir string) (*Library, error) {
	return LoadFS(os.DirFS(dir), dir)
}

// LoadFS reads every *.md and *.txt file at the top of fsys; name says in
// errors which directory that is.
func LoadFS(fsys fs.FS, name string) (*Library, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("manuals: %s: %w", name, err)
	}
	lib := &Library{df: map[string]int{}}
	files := 0
	for _, e := range entries {
		ext := strings.ToLower(path.Ext(e.Name()))
		if e.IsDir() || (ext != ".md" && ext != ".txt") || strings.EqualFold(e.Name(), "README.md") {
			continue
		}
		if files++; files > maxFiles {
			return nil, fmt.Errorf("manuals: %s: more than %d manuals", name, maxFiles)
		}
		info, err := e.Info()
		if err != nil {
			return nil, fmt.Errorf("manuals: %s: %w", name, err)
		}
		if info.Size() > maxFileBytes {
			return nil, fmt.Errorf("manuals: %s: larger than %d bytes", path.Join(name, e.Name()), maxFileBytes)
		}
		b, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, fmt.Errorf("manuals: %s: %w", name, err)
		}
		lib.sections = append(lib.sections, parse(e.Name(), string(b))...)
	}
	if len(lib.sections) == 0 {
		return nil, fmt.Errorf("manuals: %s: no manual sections (want *.md files with \"## \" headings)", name)
	}
	for _, s := range lib.sections {
		for w := range s.words {
			lib.df[w]++
		}
	}
	return lib, nil
}

// parse splits one manual into its sections.
func parse(file, text string) []*Section {
	title := strings.TrimSuffix(file, path.Ext(file))
	var out []*Section
	var cur *Section
	var body []string
	flush := func() {
		if cur != nil {
			cur.Text = strings.TrimSpace(strings.Join(body, "\n"))
			out = append(out, cur)
		}
		body = nil
	}
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "# ") && cur == nil:
			title = strings.TrimSpace(line[2:])
		case strings.HasPrefix(line, "## "):
			flush()
			cur = &Section{File: file, Manual: title, Heading: strings.TrimSpace(line[3:])}
		case cur != nil:
			body = append(body, line)
		}
	}
	flush()
	for _, s := range out {
		s.words = map[string]int{}
		for _, w := range words(s.Manual) {
			s.words[w] = max(s.words[w], 2)
		}
		for _, w := range words(s.Text) {
			s.words[w] = max(s.words[w], 1)
		}
		for _, w := range words(s.Heading) {
			s.words[w] = 3
		}
	}
	return out
}

// Hit is a section and how well it matched.
type Hit struct {
	*Section
	Score float64 `json:"score"`
}

// Search returns up to n sections matching query, best first; ties keep
// the manual's order.
func (l *Library) Search(query string, n int) []Hit {
	q := words(query)
	var hits []Hit
	for _, s := range l.sections {
		score := 0.0
		for _, qw := range q {
			best := 0
			idf := 0.0
			for w, weight := range s.words {
				if match(qw, w) && weight > best {
					best = weight
					idf = math.Log(1 + float64(len(l.sections))/float64(l.df[w]))
				}
			}
			score += float64(best) * idf
		}
		if score > 0 {
			hits = append(hits, Hit{Section: s, Score: math.Round(score*100) / 100})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	if len(hits) > n {
		hits = hits[:n]
	}
	return hits
}

// match: equal words, or one a prefix of the other with the shorter at
// least four letters, or a common stem of six.
func match(a, b string) bool {
	if a == b {
		return true
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(a) >= 4 && strings.HasPrefix(b, a) {
		return true
	}
	return len(a) >= 6 && a[:6] == b[:6]
}

// words folds s (lower case, no diacritics) and returns its words of three
// or more letters that are not stop words.
func words(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.Fields(fold(s)) {
		if len(w) >= 3 && !stop[w] && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

func fold(s string) string {
	var sb strings.Builder
	for _, r := range norm.NFD.String(s) {
		switch {
		case unicode.Is(unicode.Mn, r):
		case r == 'ł' || r == 'Ł':
			sb.WriteByte('l')
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			sb.WriteRune(unicode.ToLower(r))
		default:
			sb.WriteByte(' ')
		}
	}
	return sb.String()
}

var stop = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`the and for you your with how can what does this that from into are
		was not but have has had our all any its then when will use using after before
		jak czy nie sie jest aby lub oraz dla ten tej tego mam moj moja moje mojego przez
		ktory ktora ktore prosze dzien dobry witam hello dear thanks thank regards pozdrawiam`) {
		stop[w] = true
	}
}

// SearchIn is search_manual's input.
type SearchIn struct {
	Query string `json:"query" jsonschema:"words to look for, e.g. a product name and a task: descaling, reset, Bluetooth pairing"`
}

// SearchOut is search_manual's structured output; the section's text is
// the result's text content.
type SearchOut struct {
	Found   bool     `json:"found"`
	Manual  string   `json:"manual,omitempty"`
	Section string   `json:"section,omitempty"`
	File    string   `json:"file,omitempty"`
	Text    string   `json:"text,omitempty"`
	Score   float64  `json:"score,omitempty"`
	Also    []string `json:"also,omitempty"` // the next best sections, "manual: section"
}

// NoMatch is search_manual's answer when no section matches query: a note
// for the model, in English, not text for the customer (a reply pasting it
// into another language is refused as not in one language).
func NoMatch(query string) string {
	return fmt.Sprintf("No manual section matches %q. Note for the assistant, not for the customer: "+
		"say in the reply's own language that the manuals do not cover this; do not quote this text.", query)
}

// NewServer returns an MCP server with the search_manual tool over lib.
func NewServer(lib *Library) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "triage-manuals", Version: "1.0.0"}, nil)
	sdk.AddTool(s, &sdk.Tool{
		Name: "search_manual",
		Description: "Search the product manuals and return the section that best matches the query " +
			"(how to descale, reset, pair over Bluetooth, clean...). The answer quotes the manual's text.",
	}, func(ctx context.Context, req *sdk.CallToolRequest, in SearchIn) (*sdk.CallToolResult, SearchOut, error) {
		q := strings.TrimSpace(in.Query)
		if q == "" {
			return nil, SearchOut{}, errors.New("query is empty")
		}
		if len(q) > maxQueryBytes {
			return nil, SearchOut{}, fmt.Errorf("query is longer than %d bytes", maxQueryBytes)
		}
		hits := lib.Search(q, 3)
		if len(hits) == 0 {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{
				Text: NoMatch(q),
			}}}, SearchOut{Found: false}, nil
		}
		best := hits[0]
		text := clip.Bytes(best.Text, maxSectionBytes, "...")
		out := SearchOut{Found: true, Manual: best.Manual, Section: best.Heading, File: best.File, Score: best.Score}
		for _, h := range hits[1:] {
			out.Also = append(out.Also, h.Manual+": "+h.Heading)
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{
			Text: best.Manual + " - " + best.Heading + "\n\n" + text,
		}}}, out, nil
	})
	return s
}
