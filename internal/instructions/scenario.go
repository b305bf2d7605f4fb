package instructions

// The instruction files: main.md (rules shared by every scenario) and
// scenarios/<name>.md (YAML frontmatter that declares the functions the model
// may call, then Markdown instructions).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/adrg/frontmatter"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"triage"
)

// Scenario is one validated scenario file.
type Scenario struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Version     string `yaml:"version"`
	// Trigger is the detection label of the basic format (the category a
	// classifier returns that selects this file). In triage the label is the
	// scenario name, so a trigger, when given, must equal name; it is
	// accepted so that files written in the basic format load unchanged.
	Trigger   string     `yaml:"trigger"`
	Functions []Function `yaml:"available_functions"`
	// Rules drive deterministic detection; optional.
	Rules Rules `yaml:"rules"`
	// Fallback marks the scenario used when the model is unavailable
	// (graceful-degradation) - at most one file may set it.
	Fallback bool `yaml:"fallback"`
	// Escalate marks the escalation scenario: its reply to the customer waits
	// for a successful notify_staff, and afterwards the conversation is taken
	// over by a person. The pipeline also chooses it for a customer's third
	// message on one conversation.
	Escalate bool `yaml:"escalate"`
	// PromisesPerson marks a scenario whose reply tells the customer that a
	// person (a consultant, staff) will follow up. Such a scenario must
	// declare NotifyStaff, and its final function must require it (tools.yaml
	// requires: notify_staff if_declared): staff are told before the
	// customer is promised anything, whatever the model does.
	PromisesPerson bool `yaml:"promises_person"`
	// ReplyMode overrides the run's reply mode for this scenario: "send",
	// "draft", "auto" (draft until people's reviews qualify the scenario
	// to send on its own; see package review) or "" (the run's mode).
	ReplyMode triage.ReplyMode `yaml:"reply_mode"`
	// FollowUp marks the scenario that answers follow-ups of an existing
	// ticket: the pipeline chooses it for them, detection never offers it for
	// a new email.
	FollowUp bool `yaml:"followup"`
	// AsksFor lists what the reply asks the customer for when the message
	// lacks it (one of AskableFacts, e.g. serial_number): the scenario
	// answers a message with missing information.
	AsksFor []string `yaml:"asks_for"`
	// DeclinesTopic marks a scenario whose reply declines the topic: the
	// mailbox does not handle what the customer asks about.
	DeclinesTopic bool `yaml:"declines_topic"`
	// Complaint says whether an email this scenario handles is a consumer
	// complaint (a warranty claim), whose answer on the merits has a
	// statutory deadline (the complaint clock, package ledger): true, false
	// (the default) or if_serial (when the email names a serial number).
	Complaint Complaint `yaml:"complaint"`
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

// Serial conditions of Rules.Serial.
const (
	SerialAny      = ""
	SerialRequired = "required"
	SerialAbsent   = "absent"
)

// NotifyStaff is the function that tells staff (the notify_staff builtin):
// a scenario that escalates or promises a person declares it.
const NotifyStaff = "notify_staff"

// HandsOff reports whether sc's reply hands the customer to a person: it
// escalates, or it promises that a person will follow up. Staff are then
// told first (NotifyStaff), and without staff addresses the email is left
// for a person.
func (sc *Scenario) HandsOff() bool { return sc != nil && (sc.Escalate || sc.PromisesPerson) }

// AskableFacts are the facts a scenario's reply can ask for (asks_for).
var AskableFacts = []string{FactSerialNumber}

// FactSerialNumber is the product's serial number.
const FactSerialNumber = "serial_number"

// Asks reports whether the scenario's reply asks for the fact when the
// message lacks it.
func (sc *Scenario) Asks(fact string) bool {
	return sc != nil && slices.Contains(sc.AsksFor, fact)
}

// ReplyModeFor is the reply mode of an email handled under sc in a run whose
// mode is run: the scenario's reply_mode when set, else the run's, else send.
// Auto is returned as it is: the processor resolves it.
func ReplyModeFor(sc *Scenario, run triage.ReplyMode) triage.ReplyMode {
	if sc != nil && sc.ReplyMode != "" {
		return sc.ReplyMode
	}
	return run.Or(triage.ReplySend)
}

// Defined reports whether the scenario has detection rules at all (a serial
// condition or keywords; a priority alone is not a rule).
func (r Rules) Defined() bool {
	return r.Serial != SerialAny || len(r.Keywords) > 0
}

// Function is one declared function: its JSON Schema parameters compiled.
type Function struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Parameters is the JSON Schema as JSON-compatible values
	// (map[string]any, []any, string, float64, bool, nil) after LoadScenarios.
	Parameters map[string]any     `yaml:"parameters"`
	Schema     *jsonschema.Schema `yaml:"-"`
}

// Scenarios is every loaded scenario plus the shared main instructions.
type Scenarios struct {
	Main      string      // main.md body (without its frontmatter)
	Scenarios []*Scenario // sorted by name
	// Replies is how replies are signed, by language code ("pl", "en"),
	// from main.md's optional frontmatter (replies:). The pipeline appends
	// the AI disclosure and the signature and sets the From display name;
	// the model never signs.
	Replies map[string]ReplyStyle
	// RepliesFallback (main.md replies_fallback:) is the language whose
	// style signs a reply in a language Replies lacks; "" leaves it to the
	// caller (the inbox's default language).
	RepliesFallback string
}

// ReplyStyle is the From display name, the signature and the AI
// disclosure of replies written in one language. Disclosure is the line
// telling the customer that an AI system wrote the reply (EU AI Act art.
// 50), added above the signature unless pipeline.ai_disclosure is off.
type ReplyStyle struct {
	FromName   string `yaml:"from_name"`
	Signature  string `yaml:"signature"`
	Disclosure string `yaml:"disclosure"`
}

// mainFront is main.md's optional frontmatter.
type mainFront struct {
	Replies         map[string]ReplyStyle `yaml:"replies"`
	RepliesFallback string                `yaml:"replies_fallback"`
}

// disclosureGaps reports the reply styles without a disclosure when another
// has one: a reply in such a language would go out without it.
func disclosureGaps(styles map[string]ReplyStyle) []error {
	var with, without []string
	for lang, st := range styles {
		if strings.TrimSpace(st.Disclosure) != "" {
			with = append(with, lang)
		} else {
			without = append(without, lang)
		}
	}
	if len(with) == 0 {
		return nil
	}
	sort.Strings(with)
	sort.Strings(without)
	errs := make([]error, 0, len(without))
	for _, lang := range without {
		errs = append(errs, fmt.Errorf("scenario: %s: replies.%s.disclosure: missing (%s have one): a reply in this language would not say an AI wrote it", MainFile, lang, strings.Join(with, ", ")))
	}
	return errs
}

// MainFile is the shared instructions file; ScenarioGlob finds the scenarios.
const (
	MainFile     = "main.md"
	ScenarioGlob = "scenarios/*.md"
)

var (
	langCode     = regexp.MustCompile(`^[a-z]{2,3}$`)
	functionName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]{0,63}$`)
	// semver-ish: 1, 1.2, 1.2.3, optional leading v, pre-release and build.
	semverish = regexp.MustCompile(`^v?\d+(\.\d+){0,2}(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
)

// yamlFormat returns a frontmatter format that decodes with yaml.v3,
// strictly: an unknown key is an error (a typo such as "availabe_functions"
// must not pass silently), reported readably by DecodeYAML (line, field,
// valid keys). Such problems are stored in *problems instead of failing, and
// the frontmatter is decoded leniently, so the rest of the file is still
// validated and every problem gets reported.
func yamlFormat(problems *[]string) *frontmatter.Format {
	return frontmatter.NewFormat("---", "---", func(data []byte, v any) error {
		if len(bytes.TrimSpace(data)) == 0 {
			return errors.New("empty frontmatter")
		}
		err := DecodeYAML(data, v)
		var se *YAMLError
		if !errors.As(err, &se) {
			return err
		}
		*problems = append(*problems, se.Problems...)
		if err := yaml.Unmarshal(data, v); err != nil {
			var te *yaml.TypeError
			if !errors.As(err, &te) {
				return err
			}
		}
		return nil
	})
}

// LoadScenarios reads main.md and scenarios/*.md from fsys and validates each file:
// frontmatter present and decodable (yaml.v3), name matches the file name,
// description and body non-empty, every function has a name, description
// and a parameters schema that compiles, function names unique, and (when
// routes is not nil) every function in routes. Start-up passes nil: the
// bindings of tools.yaml are checked against the scenarios by
// Tools.Check. The error names the file
// and the field, e.g. `scenario: scenarios/foo.md: available_functions[1].parameters: ...`.
// All problems are reported, joined, not only the first; with an error, the
// returned Scenarios holds the files that loaded (callers must not start with it).
func LoadScenarios(fsys fs.FS, routes []string) (*Scenarios, error) {
	var errs []error
	set := &Scenarios{}

	main, err := fs.ReadFile(fsys, MainFile)
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("scenario: %s: %w", MainFile, err))
	case strings.TrimSpace(string(main)) == "":
		errs = append(errs, fmt.Errorf("scenario: %s: empty", MainFile))
	default:
		set.Main = strings.TrimSpace(string(main))
		if strings.HasPrefix(set.Main, "---") {
			var front mainFront
			var problems []string
			body, err := frontmatter.Parse(strings.NewReader(set.Main), &front, yamlFormat(&problems))
			if err != nil {
				errs = append(errs, fmt.Errorf("scenario: %s: frontmatter: %w", MainFile, err))
			}
			for _, p := range problems {
				errs = append(errs, fmt.Errorf("scenario: %s: frontmatter: %s", MainFile, p))
			}
			for lang, st := range front.Replies {
				if !langCode.MatchString(lang) {
					errs = append(errs, fmt.Errorf("scenario: %s: replies.%s: not a language code like pl or en", MainFile, lang))
				}
				if strings.ContainsAny(st.FromName, "\r\n<>\"") {
					errs = append(errs, fmt.Errorf("scenario: %s: replies.%s.from_name: %q must be one line of plain text", MainFile, lang, st.FromName))
				}
				if strings.ContainsAny(strings.TrimSpace(st.Disclosure), "\r\n") {
					errs = append(errs, fmt.Errorf("scenario: %s: replies.%s.disclosure: must be one line", MainFile, lang))
				}
			}
			errs = append(errs, disclosureGaps(front.Replies)...)
			if fb := front.RepliesFallback; fb != "" {
				if _, ok := front.Replies[fb]; !ok {
					errs = append(errs, fmt.Errorf("scenario: %s: replies_fallback: %q is not a language listed under replies", MainFile, fb))
				}
			}
			set.Replies, set.RepliesFallback = front.Replies, front.RepliesFallback
			set.Main = strings.TrimSpace(string(body))
			if set.Main == "" {
				errs = append(errs, fmt.Errorf("scenario: %s: empty after the frontmatter", MainFile))
			}
		}
	}

	files, err := fs.Glob(fsys, ScenarioGlob)
	if err != nil {
		errs = append(errs, fmt.Errorf("scenario: %s: %w", ScenarioGlob, err))
	}
	sort.Strings(files)
	if len(files) == 0 {
		errs = append(errs, fmt.Errorf("scenario: no scenario files (%s)", ScenarioGlob))
	}

	var fallbacks, followups, escalations []string
	broken := map[*Scenario]bool{}
	for _, file := range files {
		sc, ferrs := loadFile(fsys, file, routes)
		errs = append(errs, ferrs...)
		if sc == nil {
			continue
		}
		if len(ferrs) > 0 {
			broken[sc] = true
		}
		if sc.Fallback {
			fallbacks = append(fallbacks, file)
		}
		if sc.FollowUp {
			followups = append(followups, file)
		}
		if sc.Escalate {
			escalations = append(escalations, file)
		}
		set.Scenarios = append(set.Scenarios, sc)
	}
	for _, flag := range []struct {
		name  string
		files []string
	}{{"fallback", fallbacks}, {"followup", followups}, {"escalate", escalations}} {
		if len(flag.files) > 1 {
			errs = append(errs, fmt.Errorf("scenario: %s: %s: set in more than one file (%s)",
				flag.files[1], flag.name, strings.Join(flag.files, ", ")))
		}
	}
	sort.Slice(set.Scenarios, func(i, j int) bool { return set.Scenarios[i].Name < set.Scenarios[j].Name })
	if err := errors.Join(errs...); err != nil {
		// The files that loaded cleanly come back too, so that checks across
		// files (tools.yaml bindings) report their problems in the same run.
		set.Scenarios = slices.DeleteFunc(set.Scenarios, func(sc *Scenario) bool { return broken[sc] })
		return set, err
	}
	return set, nil
}

// loadFile parses and validates one scenario file. It returns the scenario
// (nil when it cannot be parsed) and every problem found.
func loadFile(fsys fs.FS, file string, routes []string) (*Scenario, []error) {
	var errs []error
	fail := func(field, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if field == "" {
			errs = append(errs, fmt.Errorf("scenario: %s: %s", file, msg))
			return
		}
		errs = append(errs, fmt.Errorf("scenario: %s: %s: %s", file, field, msg))
	}

	raw, err := fs.ReadFile(fsys, file)
	if err != nil {
		return nil, []error{fmt.Errorf("scenario: %s: %w", file, err)}
	}
	raw = bytes.TrimPrefix(raw, []byte("\ufeff")) // a BOM some editors add
	sc := &Scenario{File: file}
	var problems []string
	body, err := frontmatter.MustParse(bytes.NewReader(raw), sc, yamlFormat(&problems))
	if err != nil {
		if errors.Is(err, frontmatter.ErrNotFound) {
			return nil, []error{fmt.Errorf("scenario: %s: frontmatter: missing (the file must start with a --- block)", file)}
		}
		return nil, []error{fmt.Errorf("scenario: %s: frontmatter: %w", file, err)}
	}
	for _, p := range problems {
		fail("frontmatter", "%s", p)
	}
	sc.Body = strings.TrimSpace(string(body))

	want := strings.TrimSuffix(path.Base(file), ".md")
	switch {
	case sc.Name == "":
		fail("name", "missing")
	case sc.Name != want:
		fail("name", "%q does not match the file name (want %q)", sc.Name, want)
	}
	if sc.Trigger != "" && sc.Trigger != sc.Name {
		fail("trigger", "%q must equal name %q (the detection label is the scenario name; omit trigger or make it the name)", sc.Trigger, sc.Name)
	}
	if strings.TrimSpace(sc.Description) == "" {
		fail("description", "missing")
	}
	if sc.Version != "" && !semverish.MatchString(sc.Version) {
		fail("version", "%q is not a version like 1.2.3", sc.Version)
	}
	if sc.Body == "" {
		fail("body", "empty (instructions must follow the frontmatter)")
	}
	if !sc.Complaint.valid() {
		fail("complaint", "%q must be true, false or %s", sc.Complaint, ComplaintIfSerial)
	}
	if !sc.ReplyMode.Valid() {
		fail("reply_mode", "%q must be %q, %q, %q or empty", sc.ReplyMode, triage.ReplySend, triage.ReplyDraft, triage.ReplyAuto)
	}
	switch sc.Rules.Serial {
	case SerialAny, SerialRequired, SerialAbsent:
	default:
		fail("rules.serial", "%q must be %q, %q or empty", sc.Rules.Serial, SerialRequired, SerialAbsent)
	}
	for i, fact := range sc.AsksFor {
		if !slices.Contains(AskableFacts, fact) {
			fail(fmt.Sprintf("asks_for[%d]", i), "%q is not a fact a reply can ask for (known: %s)", fact, strings.Join(AskableFacts, ", "))
		}
	}
	for i, kw := range sc.Rules.Keywords {
		if !strings.ContainsFunc(kw, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
			fail(fmt.Sprintf("rules.keywords[%d]", i), "%q has no letter or digit (keywords match words)", kw)
		}
	}

	if sc.PromisesPerson && sc.Function(NotifyStaff) == nil {
		fail("promises_person", "the reply promises a person, so staff must be told first: declare %s in available_functions (tools.yaml makes the reply wait for it)", NotifyStaff)
	}
	seen := map[string]int{}
	for i := range sc.Functions {
		fn := &sc.Functions[i]
		field := fmt.Sprintf("available_functions[%d]", i)
		switch {
		case fn.Name == "":
			fail(field+".name", "missing")
		case !functionName.MatchString(fn.Name):
			fail(field+".name", "%q must match %s", fn.Name, functionName)
		default:
			if j, dup := seen[fn.Name]; dup {
				fail(field+".name", "%q already declared in available_functions[%d]", fn.Name, j)
			} else {
				seen[fn.Name] = i
			}
			if routes != nil && !slices.Contains(routes, fn.Name) {
				fail(field+".name", "%q has no dispatcher route (known: %s)", fn.Name, strings.Join(routes, ", "))
			}
		}
		if strings.TrimSpace(fn.Description) == "" {
			fail(field+".description", "missing")
		}
		params, schema, err := compileParameters(file, i, fn.Parameters)
		if err != nil {
			fail(field+".parameters", "%v", err)
			continue
		}
		fn.Parameters, fn.Schema = params, schema
	}
	return sc, errs
}

// compileParameters converts the YAML parameters to JSON values, checks they
// describe an object and compiles them with jsonschema.
func compileParameters(file string, i int, params map[string]any) (map[string]any, *jsonschema.Schema, error) {
	if params == nil {
		return nil, nil, errors.New("missing (a JSON Schema with type: object)")
	}
	j, err := JSONValue(params)
	if err != nil {
		return nil, nil, err
	}
	obj := j.(map[string]any)
	if t, _ := obj["type"].(string); t != "object" {
		return nil, nil, fmt.Errorf("type must be \"object\", got %v", obj["type"])
	}
	// Round-trip through JSON so the compiler sees exactly what
	// jsonschema.UnmarshalJSON would produce (json.Number and all).
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, nil, err
	}
	var plain map[string]any
	if err := json.Unmarshal(b, &plain); err != nil {
		return nil, nil, err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	url := fmt.Sprintf("mem:///%s/available_functions/%d.json", file, i)
	if err := c.AddResource(url, doc); err != nil {
		return nil, nil, err
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, nil, err
	}
	return plain, sch, nil
}

// noLoader refuses every external $ref: a scenario's schemas are self-contained.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema reference %q not allowed", url)
}

// Get returns the scenario with that name, or nil.
func (s *Scenarios) Get(name string) *Scenario {
	for _, sc := range s.Scenarios {
		if sc.Name == name {
			return sc
		}
	}
	return nil
}

// Names returns the scenario names in order.
func (s *Scenarios) Names() []string {
	names := make([]string, len(s.Scenarios))
	for i, sc := range s.Scenarios {
		names[i] = sc.Name
	}
	return names
}

// Flagged returns the first scenario pick accepts, or nil (e.g.
// set.Flagged(func(sc *Scenario) bool { return sc.FollowUp })).
func (s *Scenarios) Flagged(pick func(*Scenario) bool) *Scenario {
	for _, sc := range s.Scenarios {
		if pick(sc) {
			return sc
		}
	}
	return nil
}

// Fallback returns the fallback scenario, or nil.
func (s *Scenarios) Fallback() *Scenario {
	for _, sc := range s.Scenarios {
		if sc.Fallback {
			return sc
		}
	}
	return nil
}

// Function returns the declared function with that name, or nil.
func (sc *Scenario) Function(name string) *Function {
	for i := range sc.Functions {
		if sc.Functions[i].Name == name {
			return &sc.Functions[i]
		}
	}
	return nil
}
