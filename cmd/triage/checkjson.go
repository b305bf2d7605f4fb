package main

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"time"

	"triage/internal/instructions"
)

// checkReport is what check --json prints: one JSON object. Valid is false
// when a problem was found (the exit status says which kind, as without
// --json); the sections filled are those check got to.
type checkReport struct {
	Valid    bool     `json:"valid"`
	Problems []string `json:"problems"`
	Warnings []string `json:"warnings"`
	// Config is the watch configuration checked (absent without one).
	Config       *checkConfig       `json:"config,omitempty"`
	Instructions *checkInstructions `json:"instructions,omitempty"`
	Scenarios    []checkScenario    `json:"scenarios"`
	Tools        []checkTool        `json:"tools"`
	// MCPServers counts the MCP servers started and found to fit every
	// declaration.
	MCPServers int `json:"mcp_servers"`
	// OAuth2 has one entry per token source of the configuration: for
	// which account a token was obtained and how long it is valid (never
	// the token).
	OAuth2 []checkToken `json:"oauth2"`
	// Complaints are the complaint clocks of the configuration's ledger
	// (absent without one).
	Complaints *checkComplaints `json:"complaints,omitempty"`
}

// checkComplaints counts the consumer complaints not answered on their
// merits: open (the deadline is ahead) and overdue.
type checkComplaints struct {
	Open    int `json:"open"`
	Overdue int `json:"overdue"`
}

type checkConfig struct {
	Path  string `json:"path"`
	Found string `json:"found"` // how it was found
}

type checkInstructions struct {
	// Source is "built-in" or the --instructions (pipeline.instructions)
	// directory.
	Source string `json:"source"`
	// Tools is the tools.yaml read, or says that the built-in bindings
	// apply (a directory without one).
	Tools string `json:"tools"`
}

type checkScenario struct {
	Name      string   `json:"name"`
	Version   string   `json:"version,omitempty"`
	File      string   `json:"file"`
	Functions []string `json:"functions"`
	Fallback  bool     `json:"fallback,omitempty"`
	Escalate  bool     `json:"escalate,omitempty"`
	FollowUp  bool     `json:"followup,omitempty"`
}

type checkTool struct {
	Name       string   `json:"name"`
	Spec       string   `json:"spec"` // how it runs (no header values, ${VAR}s unexpanded)
	Effect     bool     `json:"effect,omitempty"`
	Final      bool     `json:"final,omitempty"`
	Grounded   bool     `json:"grounded,omitempty"`
	Parallel   bool     `json:"parallel,omitempty"`
	Prefetch   bool     `json:"prefetch,omitempty"`
	MaxCalls   int      `json:"max_calls,omitempty"`
	DeclaredBy []string `json:"declared_by"`
}

// checkToken reports one token source: the setting, the account it logs
// in as, the endpoint and grant, and the token's expiry (absent when the
// endpoint gave none).
type checkToken struct {
	Setting         string     `json:"setting"` // imap.oauth2 or smtp.oauth2
	Account         string     `json:"account"`
	TokenURL        string     `json:"token_url"`
	Grant           string     `json:"grant"`
	Expires         *time.Time `json:"expires,omitempty"`
	ValidForSeconds int64      `json:"valid_for_seconds,omitempty"`
	// SharedWith names the section that shares this source ("smtp" for
	// smtp.oauth2: imap).
	SharedWith string `json:"shared_with,omitempty"`
}

func (r *checkReport) addInstructions(dir string, ins *instructions.Set) {
	r.Instructions = &checkInstructions{Source: "built-in", Tools: ins.Tools.File}
	if dir != "" {
		r.Instructions.Source = dir
	}
	for _, sc := range ins.Scenarios.Scenarios {
		cs := checkScenario{Name: sc.Name, Version: sc.Version, File: sc.File, Functions: []string{},
			Fallback: sc.Fallback, Escalate: sc.Escalate, FollowUp: sc.FollowUp}
		for _, f := range sc.Functions {
			cs.Functions = append(cs.Functions, f.Name)
		}
		r.Scenarios = append(r.Scenarios, cs)
	}
	for _, name := range ins.Tools.Names() {
		t := ins.Tools.Get(name)
		r.Tools = append(r.Tools, checkTool{Name: name, Spec: t.Spec, Effect: t.Effect, Final: t.Final,
			Grounded: t.Grounded, Parallel: t.Parallel, Prefetch: t.Prefetch, MaxCalls: t.MaxCalls, DeclaredBy: declaredBy(name, ins.Scenarios)})
	}
}

// declaredBy lists the scenarios that declare function name.
func declaredBy(name string, set *instructions.Scenarios) []string {
	users := []string{}
	for _, sc := range set.Scenarios {
		if sc.Function(name) != nil {
			users = append(users, sc.Name)
		}
	}
	return users
}

// fail records err's problems (one per line of its message; a heading line
// ending in ":" above others is left out) and marks the report invalid.
func (r *checkReport) fail(err error) {
	r.Valid = false
	var ee *cmdError
	if errors.As(err, &ee) && ee.err != nil {
		err = ee.err
	}
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasSuffix(l, ":") && i < len(lines)-1 {
			continue
		}
		r.Problems = append(r.Problems, l)
	}
}

// write prints the report as one JSON object and returns err with its exit
// status, marked as reported (run prints nothing more).
func (r *checkReport) write(w io.Writer, err error) error {
	if err != nil {
		r.fail(err)
	}
	for _, s := range []*[]string{&r.Problems, &r.Warnings} {
		if *s == nil {
			*s = []string{}
		}
	}
	if r.Scenarios == nil {
		r.Scenarios = []checkScenario{}
	}
	if r.Tools == nil {
		r.Tools = []checkTool{}
	}
	if r.OAuth2 == nil {
		r.OAuth2 = []checkToken{}
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if werr := enc.Encode(r); werr != nil {
		return werr
	}
	if err == nil {
		return nil
	}
	kind := errFailed
	var ee *cmdError
	if errors.As(err, &ee) {
		kind = ee.kind
	}
	return &cmdError{kind: kind, err: err, logged: true}
}
