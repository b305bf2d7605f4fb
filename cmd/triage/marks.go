package main

import (
	"io"
	"os"

	"golang.org/x/term"

	"triage/eval"
)

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// marksFor returns the marks for human output on w: ✓/✗ only on a terminal
// (coloured unless NO_COLOR is set, https://no-color.org), plain ASCII words
// in files, pipes and CI logs.
func marksFor(w io.Writer) eval.Marks {
	return pickMarks(isTerminal(w), os.Getenv)
}

func pickMarks(terminal bool, getenv func(string) string) eval.Marks {
	switch {
	case !terminal:
		return eval.ASCII
	case getenv("NO_COLOR") != "" || getenv("TERM") == "dumb":
		return eval.Glyphs
	}
	return eval.Glyphs.Coloured()
}
