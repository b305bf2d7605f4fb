package main

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	// The test binary has build info: Go and the genai SDK must be named.
	want := regexp.MustCompile(`^triage \S+ \(commit \S+, go1\.\d+\S*, google\.golang\.org/genai v\d+\.\d+\.\d+\S*\)\n$`)
	for _, args := range [][]string{{"--version"}, {"version"}} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, nil, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		if !want.MatchString(out.String()) {
			t.Errorf("%v printed %q, want %v", args, out.String(), want)
		}
	}
	old := commit
	commit = "0123456789ab"
	defer func() { commit = old }()
	if s := readBuildInfo().String(); !regexp.MustCompile(`commit 0123456789ab,`).MatchString(s) {
		t.Errorf("link-time commit not reported: %q", s)
	}
}

// version --json is one object with the same facts; -v is --verbose where a
// command has it and never --version; an unknown command or a bad
// argument count says how to get help.
func TestVersionJSONAndUsageHints(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"version", "--json"}, nil, &out, &errb); code != 0 {
		t.Fatalf("version --json: exit %d: %s", code, errb.String())
	}
	var bi buildInfo
	if err := json.Unmarshal(out.Bytes(), &bi); err != nil || bi.Version == "" || !strings.HasPrefix(bi.Go, "go1.") || bi.GenAI == "" {
		t.Errorf("version --json = %q (%v)", out.String(), err)
	}
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"-v"}, []string{"unknown shorthand flag: 'v'", "Run 'triage --help' for usage."}},
		{[]string{"frobnicate"}, []string{`unknown command "frobnicate"`, "Run 'triage --help' for usage."}},
		{[]string{"prcess"}, []string{"Did you mean this?", "process", "Run 'triage --help' for usage."}},
		{[]string{"version", "extra"}, []string{"Run 'triage --help' for usage."}},
	}
	for _, tc := range tests {
		var out, errb bytes.Buffer
		if code := run(context.Background(), tc.args, nil, &out, &errb); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", tc.args, code, exitUsage)
		}
		for _, w := range tc.want {
			if !strings.Contains(errb.String(), w) {
				t.Errorf("%v: stderr %q lacks %q", tc.args, errb.String(), w)
			}
		}
	}
}
