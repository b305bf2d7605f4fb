// Package examples holds the sample data that ships with triage; its Go side
// embeds the sample manuals so the shipped product-question tool works from
// any directory, not only inside the repository.
package examples

import (
	"embed"
	"io/fs"
)

//go:embed manuals
var manualsFS embed.FS

// Manuals is the sample manuals directory (examples/manuals) built into the
// binary: what `triage mcp-manuals` serves when no directory is given.
func Manuals() fs.FS {
	sub, err := fs.Sub(manualsFS, "manuals")
	if err != nil {
		panic(err) // the directory is embedded at build time
	}
	return sub
}
