package instructions

// tools.yaml: the bindings that say how each function a scenario declares
// runs (a builtin, an HTTP JSON endpoint or a tool of an MCP server) and the
// policies the dispatcher enforces on every call to it (where an argument may
// come from, enums, patterns, lengths, earlier calls it requires, how often it
// may run, whether it changes the world and whether its success means the
// email is handled).

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"triage/internal/clients/httpapi"
	"triage/internal/decision"
)

// ToolsFile is the tools file's name inside an instructions directory.
const ToolsFile = "tools.yaml"

// Where an argument's value may come from (Arg.From).
const (
	FromSender  = "sender"   // the inbound From address
	FromReplyTo = "reply_to" // the address a reply goes to (Reply-To, else From)
	FromStaff   = "staff"    // one of the configured staff addresses
	FromSerials = "serials"  // a serial number found in the message
	// FromSerialsOrAttachments is FromSerials, or, when the model was sent
	// at least one attachment (a photo of the serial plate, a receipt), a
	// value the serial patterns accept as a whole: the model's reading of
	// the attachment, a claim the customer did not write. Such a call's
	// record says serial_source: attachment.
	FromSerialsOrAttachments = "serials_or_attachments"
	FromMessage              = "message" // whole token(s) of the subject or the new text
)

// FromKinds lists every From value, in documentation order.
var FromKinds = []string{FromSender, FromReplyTo, FromStaff, FromSerials, FromSerialsOrAttachments, FromMessage}

// HTTP methods an HTTP tool may use.
const (
	MethodGet  = "GET"  // arguments fill the {placeholders} of the URL
	MethodPost = "POST" // arguments are the JSON body (placeholders filled too)
)

// DefaultHTTPTimeout is an HTTP tool's timeout when the file gives none.
const DefaultHTTPTimeout = httpapi.DefaultTimeout

// DefaultMCPTimeout bounds one call of an MCP tool when the file gives none.
const DefaultMCPTimeout = 30 * time.Second

// Tools is a loaded tools file.
type Tools struct {
	File  string           // path of the file, for messages
	Tools map[string]*Tool // by function name
}

// Tool is one binding: exactly one of Builtin, HTTP and MCP is set.
type Tool struct {
	Name    string    `yaml:"-"`
	Builtin string    `yaml:"builtin"`
	HTTP    *HTTPSpec `yaml:"http"`
	MCP     *MCPSpec  `yaml:"mcp"`
	// Effect marks a tool that changes the world: it runs at most MaxCalls
	// times per email (default 1), the same call repeated returns the first
	// result, and dry runs skip it.
	Effect bool `yaml:"effect"`
	// Final marks the tool whose success means the email is handled.
	Final bool `yaml:"final"`
	// Parallel marks a read-only look-up whose calls may run at once: when
	// every call of a model turn is to a parallel tool, the dispatcher
	// admits them in order, runs them together and records them in order;
	// a turn with any other call runs its calls one after the other. An
	// effect or final tool cannot be parallel.
	Parallel bool `yaml:"parallel"`
	// Prefetch marks a parallel look-up whose every argument the pipeline
	// fills from the message (PrefetchFroms): before the first model turn
	// it runs, through the dispatcher, once per serial found in the
	// message (at most a few; none found: it does not run), and its
	// results are in the first user turn. See validatePrefetch.
	Prefetch bool `yaml:"prefetch"`
	// Grounded (final tools only) refuses a call whose text states a fact
	// (a ticket or serial number, a date, an amount, a phone number, an
	// address, a URL) that neither the case facts, the instructions nor a
	// function result of this email contains; the customer's own words
	// back only what the text quotes as theirs (package grounding).
	Grounded bool `yaml:"grounded"`
	// MaxCalls caps successful runs per email; 0 means the default (1 for an
	// effect, else only the per-email call cap).
	MaxCalls int `yaml:"max_calls"`
	// Commitments are what a reply may promise: a
	// scenario that declares the function's commitments parameter offers
	// them as its enum, and the dispatcher checks the declared ones (and the
	// reply's decision parameter) against the email's decision.
	Commitments []string        `yaml:"commitments"`
	Args        map[string]*Arg `yaml:"args"`
	Requires    []Requirement   `yaml:"requires"`
	// Spec is a one-line description of how the tool runs, with ${VAR}
	// unexpanded and header values left out (safe to print).
	Spec string `yaml:"-"`
}

// HTTPSpec runs a tool as an HTTP JSON request.
type HTTPSpec struct {
	Method  string            `yaml:"method"`
	URL     string            `yaml:"url"`
	Headers map[string]string `yaml:"headers"`
	Timeout time.Duration     `yaml:"timeout"`
}

// MCPSpec runs a tool of an MCP server, over stdio (Command) or streamable
// HTTP (URL).
type MCPSpec struct {
	Command []string `yaml:"command"`
	URL     string   `yaml:"url"`
	// Tool is the server's name for the tool (default: the binding's key).
	Tool string `yaml:"tool"`
	// Timeout bounds one call (default DefaultMCPTimeout).
	Timeout time.Duration `yaml:"timeout"`
	// Headers are sent with every request to a streamable HTTP server
	// (e.g. Authorization); ${VAR} expanded, never printed.
	Headers map[string]string `yaml:"headers"`
	// Env is added to a stdio server's environment (which otherwise holds
	// only mcp.ChildEnvAllowed of ours); ${VAR} expanded, never printed, and
	// its values are redacted from what the server answers.
	Env map[string]string `yaml:"env"`
}

// Arg is the policy on one argument.
type Arg struct {
	From      string   `yaml:"from"`
	Enum      []string `yaml:"enum"`
	Pattern   string   `yaml:"pattern"` // must match the whole value
	MaxLength int      `yaml:"max_length"`
	// Regexp is Pattern compiled, anchored at both ends.
	Regexp *regexp.Regexp `yaml:"-"`
}

// Requirement is an earlier successful call the tool needs in the same
// email, made in an earlier model turn.
type Requirement struct {
	Call string `yaml:"call"`
	// Result must be a subset of that call's result.
	Result map[string]any `yaml:"result"`
	// ResultOneOf are alternatives: one of them must be a subset of that
	// call's result too (a warranty still valid, or a statutory decision).
	ResultOneOf []map[string]any `yaml:"result_one_of"`
	// Same lists arguments that must be equal (normalized) in both calls.
	Same []string `yaml:"same"`
	// IfDeclared limits the requirement to the scenarios that declare Call:
	// e.g. send_email waits for notify_staff only where a scenario offers
	// notify_staff (the escalation), and is unaffected everywhere else.
	IfDeclared bool `yaml:"if_declared"`
}

// ToolsConfig says what LoadTools may accept.
type ToolsConfig struct {
	// Builtins are the builtin names the program implements; nil accepts any.
	Builtins []string
	// LookupEnv reads ${VAR} (default LookupEnv).
	LookupEnv func(string) (string, bool)
}

type fileYAML struct {
	Tools map[string]*Tool `yaml:"tools"`
}

var (
	toolName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]{0,63}$`)
	envRef   = regexp.MustCompile(`\$\{([^}]*)\}`)
	envName  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// SelfVar names the running triage binary in tools.yaml, so a binding can
// run one of triage's own servers: command: ["${TRIAGE_BIN}", "mcp-manuals"].
const SelfVar = "TRIAGE_BIN"

// LookupEnv is the default ToolsConfig.LookupEnv: the environment, where an
// unset SelfVar is this program's executable.
func LookupEnv(name string) (string, bool) {
	if v, ok := os.LookupEnv(name); ok {
		return v, true
	}
	if name == SelfVar {
		exe, err := os.Executable()
		return exe, err == nil
	}
	return "", false
}

// LoadTools reads ToolsFile from fsys, expands ${VAR} in the http and mcp settings and
// validates every binding on its own (Check validates them against the
// scenarios). All problems are reported at once, each naming the file, the
// tool and the field. With a problem the set is returned too (when the file
// could be decoded) for Check to report on; it must not be used otherwise.
func LoadTools(fsys fs.FS, cfg ToolsConfig) (*Tools, error) {
	raw, err := fs.ReadFile(fsys, ToolsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("tools: %s: missing: the instructions need a %s beside %s that binds every declared function (start from the built-in one, instructions/%s)", ToolsFile, ToolsFile, MainFile, ToolsFile)
	}
	if err != nil {
		return nil, fmt.Errorf("tools: %s: %w", ToolsFile, err)
	}
	return ParseTools(ToolsFile, raw, cfg)
}

// ParseTools is LoadTools for the contents of a file named file.
func ParseTools(file string, raw []byte, cfg ToolsConfig) (*Tools, error) {
	if cfg.LookupEnv == nil {
		cfg.LookupEnv = LookupEnv
	}
	var errs []error
	fail := func(tool, field, format string, a ...any) {
		msg := fmt.Sprintf(format, a...)
		switch {
		case tool == "":
			errs = append(errs, fmt.Errorf("tools: %s: %s", file, msg))
		case field == "":
			errs = append(errs, fmt.Errorf("tools: %s: %s: %s", file, tool, msg))
		default:
			errs = append(errs, fmt.Errorf("tools: %s: %s: %s: %s", file, tool, field, msg))
		}
	}

	var doc fileYAML
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, fmt.Errorf("tools: %s: empty (want a tools: map)", file)
	}
	// DecodeYAML reports unknown keys and wrong kinds readably (line, key
	// path, valid keys); the rest of the file is still decoded and checked.
	if err := DecodeYAML(raw, &doc); err != nil {
		var se *YAMLError
		if !errors.As(err, &se) {
			return nil, fmt.Errorf("tools: %s: %w", file, err)
		}
		for _, p := range se.Problems {
			fail("", "", "%s", p)
		}
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			var typeErr *yaml.TypeError
			if !errors.As(err, &typeErr) {
				return nil, fmt.Errorf("tools: %s: %w", file, err)
			}
		}
	}
	if doc.Tools == nil && len(errs) == 0 {
		return nil, fmt.Errorf("tools: %s: tools: missing (a map from function name to binding)", file)
	}

	set := &Tools{File: file, Tools: map[string]*Tool{}}
	for _, name := range slices.Sorted(maps.Keys(doc.Tools)) {
		t := doc.Tools[name]
		if t == nil {
			fail(name, "", "empty binding (want builtin, http or mcp)")
			continue
		}
		t.Name = name
		field := func(f string) func(string, ...any) {
			return func(format string, a ...any) { fail(name, f, format, a...) }
		}
		if !toolName.MatchString(name) {
			fail(name, "", "name must match %s", toolName)
		}
		t.validate(cfg, field)
		set.Tools[name] = t
	}
	for _, name := range slices.Sorted(maps.Keys(set.Tools)) {
		for i, r := range set.Tools[name].Requires {
			if r.Call != "" && set.Tools[r.Call] == nil {
				fail(name, fmt.Sprintf("requires[%d].call", i), "%q is not a tool of this file", r.Call)
			}
		}
	}
	// The set comes back with the error too, so that Check can still
	// report how the scenarios fit it: every problem at once.
	return set, errors.Join(errs...)
}

// validate checks one binding, fills defaults and expands ${VAR}.
func (t *Tool) validate(cfg ToolsConfig, field func(string) func(string, ...any)) {
	kinds := 0
	for _, set := range []bool{t.Builtin != "", t.HTTP != nil, t.MCP != nil} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		field("")("exactly one of builtin, http and mcp must be set (found %d)", kinds)
	}
	switch {
	case t.Builtin != "":
		if cfg.Builtins != nil && !slices.Contains(cfg.Builtins, t.Builtin) {
			field("builtin")("%q is not a builtin (known: %s)", t.Builtin, strings.Join(cfg.Builtins, ", "))
		}
		t.Spec = "builtin " + t.Builtin
	case t.HTTP != nil:
		t.validateHTTP(cfg, field)
	case t.MCP != nil:
		t.validateMCP(cfg, field)
	}
	if t.MaxCalls < 0 {
		field("max_calls")("%d is negative", t.MaxCalls)
	}
	if t.Parallel && (t.Effect || t.Final) {
		field("parallel")("an effect or the final tool changes the world: its calls run one at a time; remove parallel: true")
	}
	if t.Prefetch {
		t.validatePrefetch(field("prefetch"))
	}
	if t.Grounded && !t.Final {
		field("grounded")("only a final tool's reply is checked: set final: true, or remove grounded")
	}
	if t.Commitments != nil {
		t.validateCommitments(field("commitments"))
	}
	for _, a := range slices.Sorted(maps.Keys(t.Args)) {
		p := t.Args[a]
		f := "args." + a
		if p == nil {
			field(f)("empty policy (want from, enum, pattern or max_length)")
			continue
		}
		if p.From != "" && !slices.Contains(FromKinds, p.From) {
			field(f+".from")("%q must be one of %s", p.From, strings.Join(FromKinds, ", "))
		}
		if p.MaxLength < 0 {
			field(f+".max_length")("%d is negative", p.MaxLength)
		}
		if p.Pattern != "" {
			re, err := regexp.Compile(`^(?:` + p.Pattern + `)$`)
			if err != nil {
				field(f+".pattern")("%v", err)
			}
			p.Regexp = re
		}
		if p.From == "" && p.Enum == nil && p.Pattern == "" && p.MaxLength == 0 {
			field(f)("empty policy (want from, enum, pattern or max_length)")
		}
		if p.Enum != nil && len(p.Enum) == 0 {
			field(f + ".enum")("empty list")
		}
	}
	for i, r := range t.Requires {
		f := fmt.Sprintf("requires[%d]", i)
		switch {
		case r.Call == "":
			field(f + ".call")("missing")
		case r.Call == t.Name:
			field(f + ".call")("a tool cannot require itself")
		}
		for j, s := range r.Same {
			if s == "" {
				field(fmt.Sprintf("%s.same[%d]", f, j))("empty argument name")
			}
		}
		if r.Result != nil {
			v, err := JSONValue(r.Result)
			if err != nil {
				field(f+".result")("%v", err)
			} else {
				t.Requires[i].Result = v.(map[string]any)
			}
		}
		if r.ResultOneOf != nil && len(r.ResultOneOf) == 0 {
			field(f + ".result_one_of")("empty list (want the results one of which must match)")
		}
		for j, alt := range r.ResultOneOf {
			v, err := JSONValue(alt)
			switch {
			case err != nil:
				field(fmt.Sprintf("%s.result_one_of[%d]", f, j))("%v", err)
			case len(alt) == 0:
				field(fmt.Sprintf("%s.result_one_of[%d]", f, j))("empty result (it would match any)")
			default:
				t.Requires[i].ResultOneOf[j] = v.(map[string]any)
			}
		}
	}
}

// validateCommitments checks the commitments list: not empty, names only,
// each once, none among them.
func (t *Tool) validateCommitments(fail func(string, ...any)) {
	if len(t.Commitments) == 0 {
		fail("empty list (want e.g. [repair, replacement, ticket, none])")
	}
	seen := map[string]bool{}
	for _, c := range t.Commitments {
		switch {
		case !toolName.MatchString(c):
			fail("%q is not a name (letters, digits and _)", c)
		case seen[c]:
			fail("%q is listed twice", c)
		}
		seen[c] = true
	}
	if len(t.Commitments) > 0 && !seen[string(decision.NoCommitment)] {
		fail("%q is missing: a reply that promises nothing must be able to say so", decision.NoCommitment)
	}
}

// CommitmentsParam and DecisionParam are the parameters of a final
// function that declare what its reply promises and the decision's basis it
// is written on (Tool.Commitments).
const (
	CommitmentsParam = "commitments"
	DecisionParam    = "decision"
)

func (t *Tool) validateHTTP(cfg ToolsConfig, field func(string) func(string, ...any)) {
	h := t.HTTP
	h.Method = strings.ToUpper(strings.TrimSpace(h.Method))
	if h.Method == "" {
		h.Method = MethodGet
	}
	if h.Method != MethodGet && h.Method != MethodPost {
		field("http.method")("%q must be GET or POST", h.Method)
	}
	if h.Timeout < 0 {
		field("http.timeout")("%s is negative", h.Timeout)
	}
	if h.Timeout == 0 {
		h.Timeout = DefaultHTTPTimeout
	}
	spec := fmt.Sprintf("http %s %s", h.Method, h.URL)
	if len(h.Headers) > 0 {
		spec += " (headers: " + strings.Join(slices.Sorted(maps.Keys(h.Headers)), ", ") + ")"
	}
	t.Spec = spec + fmt.Sprintf(" timeout %s", h.Timeout)

	if h.URL == "" {
		field("http.url")("missing")
	} else {
		// The message quotes the URL as written (${VAR} unexpanded): a
		// secret in a query string must never reach an error or `check`.
		raw := h.URL
		h.URL = expand(h.URL, cfg.LookupEnv, field("http.url"))
		if !absoluteHTTP(h.URL) {
			field("http.url")("%q is not an absolute http(s) URL (after ${VAR} expansion)", raw)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(h.Headers)) {
		h.Headers[k] = expand(h.Headers[k], cfg.LookupEnv, field("http.headers."+k))
	}
}

func (t *Tool) validateMCP(cfg ToolsConfig, field func(string) func(string, ...any)) {
	m := t.MCP
	if m.Tool == "" {
		m.Tool = t.Name
	}
	if m.Timeout < 0 {
		field("mcp.timeout")("%s is negative", m.Timeout)
	}
	if m.Timeout == 0 {
		m.Timeout = DefaultMCPTimeout
	}
	switch {
	case len(m.Command) > 0 && m.URL != "":
		field("mcp")("command and url are exclusive")
	case len(m.Command) == 0 && m.URL == "":
		field("mcp")("command (stdio) or url (streamable HTTP) is required")
	}
	if len(m.Command) > 0 {
		t.Spec = fmt.Sprintf("mcp stdio %s, tool %s", strings.Join(m.Command, " "), m.Tool)
		for i := range m.Command {
			m.Command[i] = expand(m.Command[i], cfg.LookupEnv, field(fmt.Sprintf("mcp.command[%d]", i)))
		}
		if strings.TrimSpace(m.Command[0]) == "" {
			field("mcp.command[0]")("empty program name")
		}
	}
	if len(m.Headers) > 0 && m.URL == "" {
		field("mcp.headers")("only for a streamable HTTP server (url)")
	}
	if len(m.Env) > 0 && len(m.Command) == 0 {
		field("mcp.env")("only for a stdio server (command)")
	}
	for _, k := range slices.Sorted(maps.Keys(m.Env)) {
		if !envName.MatchString(k) {
			field("mcp.env." + k)("not a valid variable name")
		}
		m.Env[k] = expand(m.Env[k], cfg.LookupEnv, field("mcp.env."+k))
	}
	for _, k := range slices.Sorted(maps.Keys(m.Headers)) {
		m.Headers[k] = expand(m.Headers[k], cfg.LookupEnv, field("mcp.headers."+k))
	}
	if m.URL != "" {
		t.Spec = fmt.Sprintf("mcp %s, tool %s", m.URL, m.Tool)
		if len(m.Headers) > 0 {
			t.Spec += " (headers: " + strings.Join(slices.Sorted(maps.Keys(m.Headers)), ", ") + ")"
		}
		raw := m.URL // quoted unexpanded, as for http.url
		m.URL = expand(m.URL, cfg.LookupEnv, field("mcp.url"))
		if !absoluteHTTP(m.URL) {
			field("mcp.url")("%q is not an absolute http(s) URL (after ${VAR} expansion)", raw)
		}
	}
	t.Spec += fmt.Sprintf(" timeout %s", m.Timeout)
}

// absoluteHTTP reports whether s is an absolute http(s) URL with a host.
func absoluteHTTP(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// expand replaces every ${VAR} in s from the environment; a missing or
// malformed variable is reported through fail.
func expand(s string, lookup func(string) (string, bool), fail func(string, ...any)) string {
	return envRef.ReplaceAllStringFunc(s, func(ref string) string {
		name := ref[2 : len(ref)-1]
		if !envName.MatchString(name) {
			fail("${%s} is not a valid variable name", name)
			return ref
		}
		v, ok := lookup(name)
		if !ok {
			fail("environment variable %s is not set (referenced as ${%s})", name, name)
			return ref
		}
		return v
	})
}

// Get returns the binding of a function, or nil.
func (s *Tools) Get(name string) *Tool {
	if s == nil {
		return nil
	}
	return s.Tools[name]
}

// Names returns the bound function names, sorted.
func (s *Tools) Names() []string {
	return slices.Sorted(maps.Keys(s.Tools))
}

// Limit is how many successful runs per email the tool may have, given the
// per-email call cap: MaxCalls when set, else 1 for an effect, else perEmail.
func (t *Tool) Limit(perEmail int) int {
	switch {
	case t.MaxCalls > 0:
		return t.MaxCalls
	case t.Effect:
		return 1
	}
	return perEmail
}

// Kind is "builtin", "http" or "mcp".
func (t *Tool) Kind() string {
	switch {
	case t.HTTP != nil:
		return "http"
	case t.MCP != nil:
		return "mcp"
	}
	return "builtin"
}
