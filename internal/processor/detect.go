// Scenario detection for one email: the scenarios' own deterministic rules
// first; when they are unsure, the model chooses in the email's first turn
// (opening.go), and the fallback scenario is taken when no model may
// choose or its choice is unusable.

package processor

import (
	"fmt"
	"slices"
	"strings"

	"triage/internal/agent"
	"triage/internal/instructions"
	"triage/internal/prompt"
)

// DetectionMethod says how the scenario was chosen (Detection.Method in
// the outcome).
type DetectionMethod string

// Detection methods recorded in the outcome.
const (
	MethodRules DetectionMethod = "rules" // the scenarios' rules
	// MethodModel: the model chose, in the email's first turn
	// (choose_scenario, beside the look-ups that turn may run: Opened).
	MethodModel    DetectionMethod = "model"
	MethodFallback DetectionMethod = "fallback" // the rules were unsure and no model answered
)

// DetectResult is the chosen scenario and why.
type DetectResult struct {
	// Scenario is nil only when the rules and the model gave nothing and the
	// set has no fallback scenario.
	Scenario   *instructions.Scenario
	Method     DetectionMethod
	Reason     string
	ModelCalls int
	Usage      agent.Usage
	// Opened is the first turn that chose the scenario (MethodModel):
	// its look-ups are answered under the scenario, and the loop goes on
	// from it.
	Opened *agent.Opened
}

// Detector is built once per run. It is safe for concurrent use.
type Detector struct {
	set   *instructions.Scenarios
	ag    *agent.Agent
	rules []rule   // scenarios with rules, in set order
	names []string // the scenarios offered for a new email
}

// rule is one scenario's rules with the keywords folded once.
type rule struct {
	sc       *instructions.Scenario
	keywords []string // as written, for reasons
	folded   []string // " " + fold(keyword): stems match at a word start
}

// NewDetector builds a Detector over the loaded scenarios. ag may be nil (no model:
// rules, then fallback).
func NewDetector(set *instructions.Scenarios, ag *agent.Agent) *Detector {
	d := &Detector{set: set, ag: ag}
	if set == nil {
		return d
	}
	for _, sc := range set.Scenarios {
		if sc.FollowUp {
			continue // chosen by the pipeline for follow-ups, never for a new email
		}
		d.names = append(d.names, sc.Name)
		if !sc.Rules.Defined() {
			continue
		}
		r := rule{sc: sc}
		for _, kw := range sc.Rules.Keywords {
			if f := fold(kw); f != "" {
				r.keywords = append(r.keywords, kw)
				r.folded = append(r.folded, " "+f)
			}
		}
		d.rules = append(d.rules, r)
	}
	return d
}

// Detect chooses a scenario by the rules. facts.SerialNumbers and the
// subject/text decide them; text is the new text only. When the rules are
// unsure and a model may choose (the detector has a model and scenarios to
// offer it), decided is false and unsure says why ("no rule matched", or
// the tie): the email's first turn chooses (Processor.open). With no
// model, the fallback scenario is the choice.
func (d *Detector) Detect(facts prompt.Facts, text string) (res DetectResult, unsure string, decided bool) {
	matches := d.matches(facts, text)
	if res, ok := decide(matches); ok {
		return res, "", true
	}
	unsure = "no rule matched"
	if len(matches) > 0 {
		names := make([]string, len(matches))
		for i, m := range matches {
			names[i] = m.sc.Name
		}
		unsure = fmt.Sprintf("rules tied at priority %d: %s", matches[0].sc.Rules.Priority, strings.Join(names, ", "))
	}
	if d.ag == nil || len(d.names) == 0 {
		return d.fallback(DetectResult{}, unsure+"; no model available"), unsure, true
	}
	return DetectResult{}, unsure, false
}

// Rule evaluates the rules of the named scenario alone (no priorities, no
// model): whether they match the facts and new text, and why. A scenario
// without rules never matches.
func (d *Detector) Rule(name string, facts prompt.Facts, text string) (string, bool) {
	haystack := " " + fold(facts.Subject+"\n"+text) + " "
	for _, r := range d.rules {
		if r.sc.Name == name {
			return r.match(facts.SerialNumbers, len(facts.AttachmentsSeen) > 0, haystack)
		}
	}
	return "", false
}

// match is one scenario whose rules matched, and why.
type match struct {
	sc     *instructions.Scenario
	reason string
}

// matches evaluates every scenario's rules over the serials and the folded
// subject and new text; it returns the matches at the highest priority, in
// set order.
func (d *Detector) matches(facts prompt.Facts, text string) []match {
	haystack := " " + fold(facts.Subject+"\n"+text) + " "
	var all []match
	for _, r := range d.rules {
		if why, ok := r.match(facts.SerialNumbers, len(facts.AttachmentsSeen) > 0, haystack); ok {
			all = append(all, match{r.sc, why})
		}
	}
	if len(all) == 0 {
		return nil
	}
	top := all[0].sc.Rules.Priority
	for _, m := range all[1:] {
		top = max(top, m.sc.Rules.Priority)
	}
	var best, outranked []match
	for _, m := range all {
		if m.sc.Rules.Priority == top {
			best = append(best, m)
		} else {
			outranked = append(outranked, m)
		}
	}
	if len(best) == 1 && len(outranked) > 0 {
		var names []string
		for _, m := range outranked {
			names = append(names, fmt.Sprintf("%s (priority %d)", m.sc.Name, m.sc.Rules.Priority))
		}
		best[0].reason += fmt.Sprintf("; priority %d outranks %s", top, strings.Join(names, ", "))
	}
	return best
}

// decide returns the rules' answer when exactly one scenario matched at the
// highest priority.
func decide(best []match) (DetectResult, bool) {
	if len(best) != 1 {
		return DetectResult{}, false
	}
	return DetectResult{Scenario: best[0].sc, Method: MethodRules, Reason: best[0].sc.Name + ": " + best[0].reason}, true
}

// match reports whether the rule holds for the serials and the folded,
// space-padded haystack, and why. "serial: absent" does not hold when the
// model is sent attachments (seen): the serial may be on a photo.
func (r rule) match(serials []string, seen bool, haystack string) (string, bool) {
	var why []string
	switch r.sc.Rules.Serial {
	case instructions.SerialRequired:
		if len(serials) == 0 {
			return "", false
		}
		why = append(why, fmt.Sprintf("serial %s present", strings.Join(serials, ", ")))
	case instructions.SerialAbsent:
		if len(serials) > 0 || seen {
			return "", false
		}
		why = append(why, "no serial")
	}
	if len(r.folded) > 0 {
		hit := -1
		for i, kw := range r.folded {
			// Keywords are stems: they match at the start of a word.
			if strings.Contains(haystack, kw) {
				hit = i
				break
			}
		}
		if hit < 0 {
			return "", false
		}
		why = append(why, fmt.Sprintf("keyword %q", r.keywords[hit]))
	}
	return strings.Join(why, "; "), true
}

// offered returns the scenario the model named, when it is one of those
// offered: the enum of the schema or the declaration is no guarantee.
func (d *Detector) offered(name string) (*instructions.Scenario, error) {
	sc := d.set.Get(name)
	if sc == nil {
		return nil, fmt.Errorf("detect: model chose unknown scenario %q", name)
	}
	if !slices.Contains(d.names, sc.Name) {
		return nil, fmt.Errorf("detect: model chose scenario %q, which was not offered", name)
	}
	return sc, nil
}

// maxReason caps the model's reason in the outcome: it is model output about
// untrusted text, kept to one short line.
const maxReason = 200

// fallback completes res with the fallback scenario (nil when the set has
// none).
func (d *Detector) fallback(res DetectResult, why string) DetectResult {
	res.Method, res.Scenario = MethodFallback, nil
	if d.set != nil {
		res.Scenario = d.set.Fallback()
	}
	if res.Scenario == nil {
		res.Reason = why + "; no fallback scenario"
		return res
	}
	res.Reason = res.Scenario.Name + ": " + why
	return res
}
