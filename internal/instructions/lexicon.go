// commitments.yaml: the phrases that promise a commitment or state a status
// (decision.LexiconSpec), decoded strictly, validated and compiled once.

package instructions

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"

	"gopkg.in/yaml.v3"

	embedded "triage/instructions"
	"triage/internal/decision"
)

// LexiconFile is the lexicon's file name in an instructions directory.
const LexiconFile = decision.LexiconFile

// LoadLexicon loads, validates and compiles fsys's commitments.yaml; a
// directory without one, and a nil fsys, get the built-in lexicon (package
// triage/instructions).
func LoadLexicon(fsys fs.FS) (*decision.Lexicon, error) {
	if fsys == nil {
		fsys = embedded.FS
	}
	raw, err := fs.ReadFile(fsys, LexiconFile)
	if errors.Is(err, fs.ErrNotExist) && fsys != fs.FS(embedded.FS) {
		return LoadLexicon(embedded.FS)
	}
	if err != nil {
		return nil, fmt.Errorf("lexicon: %s: %w", LexiconFile, err)
	}
	return ParseLexicon(LexiconFile, raw)
}

// ParseLexicon is LoadLexicon for the contents of a file named file. Every
// problem is reported at once, each naming file, line and the key path
// (`lexicon: commitments.yaml: line 7: commitments.repair.pl[1]: "" has no
// word`).
func ParseLexicon(file string, raw []byte) (*decision.Lexicon, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, fmt.Errorf("lexicon: %s: empty (want commitments: and statuses:)", file)
	}
	var s decision.LexiconSpec
	if err := DecodeYAML(raw, &s); err != nil {
		var se *YAMLError
		if !errors.As(err, &se) {
			return nil, fmt.Errorf("lexicon: %s: %w", file, err)
		}
		errs := make([]error, len(se.Problems))
		for i, pr := range se.Problems {
			errs[i] = fmt.Errorf("lexicon: %s: %s", file, pr)
		}
		return nil, errors.Join(errs...)
	}
	if problems := s.Validate(); len(problems) > 0 {
		var doc yaml.Node
		_ = yaml.Unmarshal(raw, &doc) // DecodeYAML parsed it
		errs := make([]error, len(problems))
		for i, pr := range problems {
			errs[i] = fmt.Errorf("lexicon: %s: line %d: %s", file, lineOf(&doc, pr.Path), pr)
		}
		return nil, errors.Join(errs...)
	}
	l, err := decision.CompileLexicon(&s)
	if err != nil {
		return nil, fmt.Errorf("lexicon: %s: %w", file, err)
	}
	return l, nil
}
