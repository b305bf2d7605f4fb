package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"
	"triage/internal/settings"

	"github.com/spf13/cobra"
)

// version can be set at link time: -ldflags "-X main.version=v1.2.3".
// Otherwise it comes from the build info (the module version with go
// install, "(devel)" in a checkout).
var version = ""

// commit can be set at link time (the Makefile does: -X main.commit=...);
// otherwise it is the vcs.revision of the build info, when Go stamped one.
var commit = ""

// buildInfo is what triage --version reports.
type buildInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Go       string `json:"go"`
	GenAI    string `json:"genai"`
	Modified bool   `json:"modified"`
}

// readBuildInfo reads the version, VCS commit, Go version and the genai SDK
// version from the binary's build information.
func readBuildInfo() buildInfo {
	b := buildInfo{Version: version, Commit: "unknown", Go: "unknown", GenAI: "unknown"}

	bi, ok := debug.ReadBuildInfo()
	if !ok {
		if commit != "" {
			b.Commit = commit
		}
		if b.Version == "" {
			b.Version = "unknown"
		}
		return b
	}
	b.Go = bi.GoVersion
	if b.Version == "" {
		b.Version = bi.Main.Version
	}
	if b.Version == "" {
		b.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	if commit != "" {
		b.Commit = commit
	}
	for _, d := range bi.Deps {
		if d.Path == "google.golang.org/genai" {
			b.GenAI = d.Version
			if d.Replace != nil {
				b.GenAI = d.Replace.Version
			}
		}
	}
	return b
}

// String is the one line triage --version prints.
func (b buildInfo) String() string {
	commit := b.Commit
	if len(commit) == 40 { // a full SHA from the build info
		commit = commit[:12]
	}
	if b.Modified {
		commit += "+dirty"
	}
	return fmt.Sprintf("triage %s (commit %s, %s, google.golang.org/genai %s)", b.Version, commit, b.Go, b.GenAI)
}

func printVersion(w io.Writer) {
	fmt.Fprintln(w, readBuildInfo().String())
}

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, Go and genai SDK versions (same as --version)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(readBuildInfo())
			}
			printVersion(cmd.OutOrStdout())
			return nil
		},
	}
	bindSettings(cmd, settings.Table{{Flag: "json", Usage: "print one JSON object: version, commit, go, genai, modified", Var: settings.Bool(&asJSON, false)}})
	return cmd
}
