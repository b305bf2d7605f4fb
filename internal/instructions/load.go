package instructions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	embedded "triage/instructions"
	"triage/internal/decision"
)

// Set is everything loaded from one instructions directory: main.md and the
// scenarios, and the tools.yaml bindings, checked against each other, and
// the policy.yaml the warranty decision follows, and the commitments.yaml
// lexicon a reply's words are read with.
type Set struct {
	Scenarios *Scenarios
	Tools     *Tools
	Policy    *decision.Policy
	Lexicon   *decision.Lexicon
}

// DirError is an instructions directory that cannot be used at all: it does
// not exist, cannot be read or is not a directory. Nothing was loaded.
type DirError struct {
	Dir string
	Err error // names Dir
}

func (e *DirError) Error() string { return e.Err.Error() }
func (e *DirError) Unwrap() error { return e.Err }

// Load loads and validates the instructions in dir ("" loads the built-in
// ones, package triage/instructions) exactly as start-up does: main.md,
// scenarios/*.md, tools.yaml (${VAR} from the environment; builtins are the
// builtin names it may bind), the bindings against the scenarios, and
// policy.yaml and commitments.yaml. A directory in the basic format (no tools.yaml) is bound by
// the built-in tools.yaml's builtin entries; one without policy.yaml gets
// the built-in policy, one without commitments.yaml the built-in lexicon.
// Every problem is reported at once, in one
// error that names dir, each problem naming its file (relative to dir); a
// *DirError when dir itself cannot be read.
func Load(dir string, builtins []string) (*Set, error) {
	fsys, err := dirFS(dir)
	if err != nil {
		return nil, err
	}
	scs, serr := LoadScenarios(fsys, nil)
	var ts *Tools
	var terr error
	if _, err := fs.Stat(fsys, ToolsFile); dir != "" && errors.Is(err, fs.ErrNotExist) {
		ts, terr = builtinBindings(dir, builtins)
	} else {
		ts, terr = LoadTools(fsys, ToolsConfig{Builtins: builtins})
	}
	if scs != nil && ts != nil { // even when some scenario file is broken: every problem in one run
		terr = errors.Join(terr, ts.Check(scs))
	}
	pol, perr := LoadPolicy(fsys)
	lex, lerr := LoadLexicon(fsys)
	if err := errors.Join(serr, terr, perr, lerr); err != nil {
		if dir != "" { // say which directory: the file names inside are relative to it
			err = fmt.Errorf("%s:\n%w", dir, err)
		}
		return nil, err
	}
	return &Set{Scenarios: scs, Tools: ts, Policy: pol, Lexicon: lex}, nil
}

// dirFS returns the instructions to load: dir, or the built-in ones.
func dirFS(dir string) (fs.FS, error) {
	if dir == "" {
		return embedded.FS, nil
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, &DirError{Dir: dir, Err: err}
	}
	if !st.IsDir() {
		return nil, &DirError{Dir: dir, Err: fmt.Errorf("%s is not a directory", dir)}
	}
	return os.DirFS(dir), nil
}

// builtinBindings are the bindings of an instructions directory in the
// basic format (main.md and scenarios/, no tools.yaml): the built-in
// tools.yaml's entries for the builtins, with their policies; the other
// tools it binds (the manuals server) are not part of them.
func builtinBindings(dir string, builtins []string) (*Tools, error) {
	ts, err := LoadTools(embedded.FS, ToolsConfig{Builtins: builtins})
	if err != nil {
		return nil, err
	}
	for name, t := range ts.Tools {
		if t.Builtin == "" {
			delete(ts.Tools, name)
		}
	}
	ts.File = fmt.Sprintf("no %s in %s: the built-in bindings", ToolsFile, dir)
	return ts, nil
}
