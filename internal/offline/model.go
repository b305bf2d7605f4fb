package offline

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"unicode"

	"google.golang.org/genai"

	"triage/internal/prompt"
	"triage/internal/scenario"
)

// turn is the offline model's answer to one request, before faults.
type turn struct {
	kind    string // "detection", "call" or "text"
	content *genai.Content
}

func (t *turn) candidate(index int32) *genai.Candidate {
	return &genai.Candidate{Content: t.content, FinishReason: genai.FinishReasonStop, Index: index}
}

// sendsReply reports whether the turn calls a reply function (one with a
// "to" argument).
func (t *turn) sendsReply() bool {
	for _, p := range t.content.Parts {
		if p.FunctionCall != nil && p.FunctionCall.Args["to"] != nil {
			return true
		}
	}
	return false
}

func textTurn(kind, text string) *turn {
	return &turn{kind: kind, content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: text}}}}
}

// answer decides the reply to req. It reads only the facts block, the
// scenario list of a detection prompt, the declared functions and the
// function responses; the customer text is used for nothing but word counts
// in detection, so instructions inside it cannot steer the model.
func answer(req *request, set *scenario.Set) *turn {
	facts, user, found := findFacts(req.Contents)
	if enum := scenarioEnum(req.GenerationConfig); len(enum) > 0 {
		return detect(enum, facts, user)
	}
	if !found {
		return textTurn("text", "offline: the prompt has no facts block, so there is nothing the offline model can do.")
	}
	var sc *scenario.Scenario
	if set != nil {
		sc = set.Get(facts.Scenario)
	}
	return nextStep(req, facts, sc)
}

// findFacts returns the facts of the first user text part that has a facts
// block, and that part's text.
func findFacts(contents []*genai.Content) (prompt.Facts, string, bool) {
	var first string
	for _, c := range contents {
		if c == nil || (c.Role != "" && c.Role != genai.RoleUser) {
			continue
		}
		for _, p := range c.Parts {
			if p == nil || p.Text == "" {
				continue
			}
			if first == "" {
				first = p.Text
			}
			if f, err := prompt.ParseFacts(p.Text); err == nil {
				return f, p.Text, true
			}
		}
	}
	return prompt.Facts{}, first, false
}

// scenarioEnum returns the enum of the "scenario" property of a JSON
// response schema (responseSchema or responseJsonSchema), or nil.
func scenarioEnum(gc *genai.GenerationConfig) []string {
	if gc == nil || !strings.HasPrefix(strings.ToLower(gc.ResponseMIMEType), "application/json") {
		return nil
	}
	if s := gc.ResponseSchema; s != nil {
		if p := s.Properties["scenario"]; p != nil && len(p.Enum) > 0 {
			return p.Enum
		}
	}
	root, _ := gc.ResponseJsonSchema.(map[string]any)
	props, _ := root["properties"].(map[string]any)
	sc, _ := props["scenario"].(map[string]any)
	raw, _ := sc["enum"].([]any)
	var out []string
	for _, v := range raw {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// detect scores each scenario description against the subject and message
// by shared distinct word stems (words of >= 4 letters, their first five;
// lowercase, Polish diacritics
// folded). The highest score wins, ties go to the earlier enum value; with
// no overlap at all it names no scenario, and detection falls back.
func detect(enum []string, f prompt.Facts, user string) *turn {
	descs := scenarioDescriptions(user)
	msg := stems(words(f.Subject + "\n" + prompt.Message(user)))
	best, bestScore := "", 0
	var bestShared []string
	for _, name := range enum {
		var shared []string
		for w := range stems(words(descs[name])) {
			if msg[w] {
				shared = append(shared, w)
			}
		}
		if len(shared) > bestScore {
			best, bestScore, bestShared = name, len(shared), shared
		}
	}
	var reason string
	if bestScore == 0 {
		// Nothing to go on: say so with a choice the detector cannot
		// use, so it takes the set's fallback scenario.
		best = ""
		reason = "offline: no scenario description shares a word with the message; the offline model cannot choose"
	} else {
		sort.Strings(bestShared)
		if len(bestShared) > 8 {
			bestShared = append(bestShared[:8], "...")
		}
		reason = fmt.Sprintf("offline: chosen by word overlap with the scenario description (%d shared words: %s)", bestScore, strings.Join(bestShared, ", "))
	}
	b, _ := json.Marshal(struct {
		Scenario string `json:"scenario"`
		Reason   string `json:"reason"`
	}{best, reason})
	return textTurn("detection", string(b))
}

// scenarioDescriptions reads the "- name: description" lines of a
// detection prompt (prompt.Detection), stopping at the facts block.
func scenarioDescriptions(user string) map[string]string {
	head, _, _ := strings.Cut(user, prompt.FactsHeader)
	out := map[string]string{}
	for _, line := range strings.Split(head, "\n") {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, "- ")
		if !ok {
			continue
		}
		name, desc, ok := strings.Cut(rest, ":")
		if !ok {
			continue
		}
		name = strings.TrimSpace(name)
		if _, seen := out[name]; !seen {
			out[name] = strings.TrimSpace(desc)
		}
	}
	return out
}

var polishFold = strings.NewReplacer("ą", "a", "ć", "c", "ę", "e", "ł", "l", "ń", "n", "ó", "o", "ś", "s", "ź", "z", "ż", "z")

// words returns the distinct lowercase words of at least four letters in s,
// with Polish diacritics folded.
func words(s string) map[string]bool {
	s = polishFold.Replace(strings.ToLower(s))
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len([]rune(w)) >= 4 {
			out[w] = true
		}
	}
	return out
}

// stemLen is how many leading letters two words must share to count as the
// same word (Polish and English inflect the end: gwarancja/gwarancji,
// dostawa/dostawę, deliveries/delivery).
const stemLen = 5

// stems maps each word to its first stemLen letters.
func stems(ws map[string]bool) map[string]bool {
	out := make(map[string]bool, len(ws))
	for w := range ws {
		if r := []rune(w); len(r) > stemLen {
			w = string(r[:stemLen])
		}
		out[w] = true
	}
	return out
}

// outcome is one function response from the history, with the arguments of
// the call it answers.
type outcome struct {
	name    string
	ok      bool
	result  map[string]any
	errCode string
	errMsg  string
	args    map[string]any
}

// dryRun reports whether the result is a dry run's stand-in (the
// dispatcher answered an effect function without running it): it states no
// fact, at most a placeholder a reply may show (a ticket_id).
func (o outcome) dryRun() bool {
	b, _ := o.result["dry_run"].(bool)
	return b
}

// str reads a string field of the result, falling back to the call args.
func (o outcome) str(key string) string {
	if s, ok := o.result[key].(string); ok && s != "" {
		return s
	}
	s, _ := o.args[key].(string)
	return s
}

// history collects the function calls and responses so far.
type history struct {
	calls   int
	results []outcome
}

func (h *history) named(name string) []outcome {
	var out []outcome
	for _, o := range h.results {
		if o.name == name {
			out = append(out, o)
		}
	}
	return out
}

func readHistory(contents []*genai.Content) *history {
	h := &history{}
	byID := map[string]*genai.FunctionCall{}
	byName := map[string][]*genai.FunctionCall{}
	answered := map[string]int{}
	for _, c := range contents {
		if c == nil {
			continue
		}
		for _, p := range c.Parts {
			if p == nil {
				continue
			}
			if fc := p.FunctionCall; fc != nil {
				h.calls++
				if fc.ID != "" {
					byID[fc.ID] = fc
				}
				byName[fc.Name] = append(byName[fc.Name], fc)
			}
			if fr := p.FunctionResponse; fr != nil {
				call := byID[fr.ID]
				if call == nil {
					if k := answered[fr.Name]; k < len(byName[fr.Name]) {
						call = byName[fr.Name][k]
					}
				}
				answered[fr.Name]++
				o := envelope(fr.Name, fr.Response)
				if call != nil {
					o.args = call.Args
				}
				h.results = append(h.results, o)
			}
		}
	}
	return h
}

// envelope reads {"ok":true,"result":{...}} or
// {"ok":false,"error":{"code":..,"message":..}}; it also accepts the SDK's
// {"output":..} / {"error":..} convention.
func envelope(name string, resp map[string]any) outcome {
	o := outcome{name: name}
	errObj := resp["error"]
	if v, ok := resp["ok"].(bool); ok {
		o.ok = v
	} else {
		o.ok = errObj == nil
	}
	if r, ok := resp["result"].(map[string]any); ok {
		o.result = r
	} else if r, ok := resp["output"].(map[string]any); ok {
		o.result = r
	}
	switch e := errObj.(type) {
	case map[string]any:
		o.errCode, _ = e["code"].(string)
		o.errMsg, _ = e["message"].(string)
	case string:
		o.errMsg = e
	}
	if !o.ok && o.errCode == "" {
		o.errCode = "error"
	}
	return o
}

// declared lists the callable function names, honouring toolConfig
// (mode NONE disables calls; allowedFunctionNames narrows them).
func declared(req *request) map[string]bool {
	out := map[string]bool{}
	for _, t := range req.Tools {
		if t == nil {
			continue
		}
		for _, fd := range t.FunctionDeclarations {
			if fd != nil && fd.Name != "" {
				out[fd.Name] = true
			}
		}
	}
	if tc := req.ToolConfig; tc != nil && tc.FunctionCallingConfig != nil {
		fcc := tc.FunctionCallingConfig
		if fcc.Mode == genai.FunctionCallingConfigModeNone {
			return map[string]bool{}
		}
		if len(fcc.AllowedFunctionNames) > 0 {
			allowed := map[string]bool{}
			for _, n := range fcc.AllowedFunctionNames {
				if out[n] {
					allowed[n] = true
				}
			}
			out = allowed
		}
	}
	return out
}

// nextStep follows whatever the scenario declares, in declaration order:
// every function but the reply runs once its arguments can be filled from
// the facts (a function taking serial_number runs for each serial, a later
// one only for a serial whose earlier results were positive), then the
// reply function (the one with to and body) sends what the results say.
func nextStep(req *request, f prompt.Facts, sc *scenario.Scenario) *turn {
	decls := declarations(req)
	h := readHistory(req.Contents)
	call := func(calls ...*genai.FunctionCall) *turn {
		parts := make([]*genai.Part, len(calls))
		for i, c := range calls {
			c.ID = fmt.Sprintf("offline-call-%d", h.calls+i+1)
			parts[i] = &genai.Part{FunctionCall: c}
		}
		return &turn{kind: "call", content: &genai.Content{Role: genai.RoleModel, Parts: parts}}
	}

	reply := replyFunction(decls)
	keyword := significantWord(f.Subject, prompt.Message(firstUserText(req.Contents)))
	serialUsers := 0
	for _, d := range decls {
		if d == reply {
			continue
		}
		if len(h.named(d.Name)) > 0 {
			if takes(d, "serial_number") {
				serialUsers++
			}
			continue
		}
		if takes(d, "serial_number") {
			serialUsers++
			var calls []*genai.FunctionCall
			for _, sn := range f.SerialNumbers {
				if serialUsers > 1 && !positive(h, sn) {
					continue
				}
				if args, ok := fill(d, f, sn, keyword); ok {
					calls = append(calls, &genai.FunctionCall{Name: d.Name, Args: args})
				}
				if serialUsers > 1 {
					break // one follow-up (a ticket) per email, for the first eligible serial
				}
			}
			if len(calls) > 0 {
				return call(calls...)
			}
			continue
		}
		if args, ok := fill(d, f, "", keyword); ok {
			return call(&genai.FunctionCall{Name: d.Name, Args: args})
		}
	}

	if reply == nil {
		return textTurn("text", "offline: no declared function takes to and body, so the offline model has no way to reply.")
	}
	sends := h.named(reply.Name)
	var failed []outcome
	for _, s := range sends {
		if s.ok {
			return textTurn("text", "Reply sent.")
		}
		failed = append(failed, s)
	}
	if len(failed) >= 2 {
		last := failed[len(failed)-1]
		return textTurn("text", fmt.Sprintf("offline: the reply could not be sent: %s failed %d times (last error: %s %s). A person needs to answer this message.",
			reply.Name, len(failed), last.errCode, strings.TrimSpace(last.errMsg)))
	}
	// After a failure (e.g. recipient_not_allowed) the fix is always the
	// same: the trusted reply_to from the facts block.
	args, _ := fill(reply, f, "", keyword)
	args["body"] = composeBody(f, h, decls, reply, sc)
	return call(&genai.FunctionCall{Name: reply.Name, Args: args})
}

// declarations lists the callable declarations in order, honouring
// toolConfig (mode NONE disables calls; allowedFunctionNames narrows them).
func declarations(req *request) []*genai.FunctionDeclaration {
	allowed := declared(req)
	var out []*genai.FunctionDeclaration
	for _, t := range req.Tools {
		if t == nil {
			continue
		}
		for _, fd := range t.FunctionDeclarations {
			if fd != nil && allowed[fd.Name] {
				out = append(out, fd)
			}
		}
	}
	return out
}

// replyFunction is the declared function with both a to and a body
// parameter: the reply.
func replyFunction(decls []*genai.FunctionDeclaration) *genai.FunctionDeclaration {
	for _, d := range decls {
		if takes(d, "to") && takes(d, "body") {
			return d
		}
	}
	return nil
}

// schema returns a declaration's parameters as JSON values.
func schema(d *genai.FunctionDeclaration) (props map[string]any, required []string) {
	var root map[string]any
	switch p := d.ParametersJsonSchema.(type) {
	case map[string]any:
		root = p
	default:
		if p != nil {
			b, _ := json.Marshal(p)
			_ = json.Unmarshal(b, &root)
		}
	}
	if root == nil && d.Parameters != nil {
		b, _ := json.Marshal(d.Parameters)
		_ = json.Unmarshal(b, &root)
		// genai.Schema encodes property names the same way.
	}
	props, _ = root["properties"].(map[string]any)
	if rs, ok := root["required"].([]any); ok {
		for _, r := range rs {
			if s, ok := r.(string); ok {
				required = append(required, s)
			}
		}
	}
	return props, required
}

func takes(d *genai.FunctionDeclaration, param string) bool {
	props, _ := schema(d)
	_, ok := props[param]
	return ok
}

// fill builds the arguments of d by parameter name from the facts:
// serial_number <- serial, to <- reply_to, customer_email/email/from <- from,
// subject <- "Re: "+subject, an enum <- "normal" when offered (else its first
// value), and any other required string <- keyword (a word of the customer's
// subject or new text). Optional parameters are filled only from the facts.
// It reports false when a required parameter cannot be filled.
func fill(d *genai.FunctionDeclaration, f prompt.Facts, serialNumber, keyword string) (map[string]any, bool) {
	props, required := schema(d)
	isRequired := map[string]bool{}
	for _, r := range required {
		isRequired[r] = true
	}
	args := map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(props)) {
		p, _ := props[name].(map[string]any)
		var v string
		switch name {
		case "serial_number":
			v = serialNumber
		case "to":
			v = f.ReplyTo
		case "customer_email", "email", "from", "sender":
			v = f.From
		case "subject":
			v = replySubject(f.Subject)
		case "body":
			// The reply's body is written by composeBody; anything else
			// (a note to staff) gets a short note.
			v = "The offline stand-in model handled this email and a person should review it. Subject: " + f.Subject
		default:
			if !isRequired[name] {
				continue
			}
			if enum, _ := p["enum"].([]any); len(enum) > 0 {
				v = fmt.Sprint(enum[0])
				for _, e := range enum {
					if e == "normal" {
						v = "normal"
					}
				}
			} else if t, _ := p["type"].(string); t == "string" || t == "" {
				v = keyword
			}
		}
		if v == "" {
			if isRequired[name] {
				return nil, false
			}
			continue
		}
		args[name] = v
	}
	return args, true
}

// positive reports whether every earlier successful result for sn has no
// negative status (only "valid", or no status at all, counts as positive),
// and there was at least one.
func positive(h *history, sn string) bool {
	seen := false
	for _, o := range h.results {
		if o.dryRun() || o.args["serial_number"] != sn && o.str("serial_number") != sn {
			continue // a dry run's stand-in says nothing about the serial
		}
		if !o.ok {
			return false
		}
		if st := o.str("status"); st != "" && st != "valid" {
			return false
		}
		seen = true
	}
	return seen
}

// stopwords are frequent words that say nothing about what is asked.
var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`about after again also because been before being could dear does doing from have having hello here into just more most much need only other over please same should some such than that their them then there these they this those thank thanks very what when where which while will with would your yours
		dzien dobry witam prosze bardzo dziekuje pozdrawiam jest jestem mam moje moja moj mnie oraz przez tego tylko jednak kiedy ktory ktora ktore jakie jak czy gdzie sobie bedzie byla bylo teraz juz wiec albo ale mozna mozecie panstwo panstwa pytanie pytaniem sprawie odpowiedz`) {
		stopwords[w] = true
	}
}

// significantWord picks the longest word of at least four letters from the
// subject (else the new text) that is not a common word; "" when none.
func significantWord(subject, text string) string {
	for _, s := range []string{replySubject(subject)[len("Re: "):], text} {
		best := ""
		for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if len([]rune(w)) < 4 || stopwords[polishFold.Replace(strings.ToLower(w))] {
				continue
			}
			if len([]rune(w)) > len([]rune(best)) {
				best = w
			}
		}
		if best != "" && best != "zapytanie" {
			return best
		}
	}
	return ""
}

// firstUserText is the first user text part (the prompt with the facts).
func firstUserText(contents []*genai.Content) string {
	_, text, _ := findFacts(contents)
	return text
}

// replySubject prefixes "Re: " once; an empty subject becomes "Re: zapytanie".
func replySubject(s string) string {
	s = strings.TrimSpace(s)
	for {
		lower := strings.ToLower(s)
		if strings.HasPrefix(lower, "re:") {
			s = strings.TrimSpace(s[3:])
			continue
		}
		break
	}
	if s == "" {
		return "Re: zapytanie"
	}
	return "Re: " + s
}
