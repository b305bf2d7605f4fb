// Package scenario loads and validates the instruction files: main.md (rules
// shared by every scenario) and scenarios/<name>.md (YAML frontmatter that
// declares the functions the model may call, then Markdown instructions).
package scenario

import (
	"io/fs"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Scenario is one validated scenario file.
type Scenario struct {
	Name        string     `yaml:"name"`
	Description string     `yaml:"description"`
	Version     string     `yaml:"version"`
	Functions   []Function `yaml:"available_functions"`
	// Rules drive deterministic detection; optional.
	Rules Rules `yaml:"rules"`
	// Fallback marks the scenario used when the model is unavailable
	// (graceful-degradation) - at most one file may set it.
	Fallback bool `yaml:"fallback"`
	// Escalate allows send_email to the configured staff addresses too.
	Escalate bool `yaml:"escalate"`
	// Body is the Markdown after the frontmatter (non-empty).
	Body string `yaml:"-"`
	// File is the path the scenario came from, for messages.
	File string `yaml:"-"`
}

// Rules are the deterministic detection rules of one scenario.
type Rules struct {
	// Serial: "required" (a serial must be present), "absent" (none may be),
	// or "" (either).
	Serial string `yaml:"serial"`
	// Keywords: at least one must occur in the subject or new text
	// (case-insensitive, diacritics-insensitive) for the rule to match.
	// Empty means "no keyword needed".
	Keywords []string `yaml:"keywords"`
	// Priority breaks ties between matching scenarios (higher wins).
	Priority int `yaml:"priority"`
}

// Function is one declared function: its JSON Schema parameters compiled.
type Function struct {
	Name        string             `yaml:"name"`
	Description string             `yaml:"description"`
	Parameters  map[string]any     `yaml:"parameters"`
	Schema      *jsonschema.Schema `yaml:"-"`
}

// Set is every loaded scenario plus the shared main instructions.
type Set struct {
	Main      string      // main.md body
	Scenarios []*Scenario // sorted by name
}

// Load reads main.md and scenarios/*.md from fsys and validates each file:
// frontmatter present and decodable (yaml.v3), name matches the file name,
// description and body non-empty, every function has a name, description
// and a parameters schema that compiles, function names unique, every
// function in routes (the dispatcher's known names). The error names the file
// and the field, e.g. `scenario: scenarios/foo.md: available_functions[1].parameters: ...`.
// All problems are reported, joined, not only the first.
func Load(fsys fs.FS, routes []string) (*Set, error) { panic("TODO") }

// Get returns the scenario with that name, or nil.
func (s *Set) Get(name string) *Scenario { panic("TODO") }

// Names returns the scenario names in order.
func (s *Set) Names() []string { panic("TODO") }

// Fallback returns the fallback scenario (may be nil).
func (s *Set) Fallback() *Scenario { panic("TODO") }

// Function returns the declared function with that name, or nil.
func (sc *Scenario) Function(name string) *Function { panic("TODO") }
