package main

import (
	"bytes"
	"context"
	"regexp"
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
