// Scenario detection folded into an email's first model turn: when the
// scenarios' rules are unsure, that turn offers the candidate scenarios
// (choose_scenario, an enum of their names) beside the read-only look-ups
// they declare, and the loop goes on from it under the chosen scenario.

package processor

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"google.golang.org/genai"

	"triage/internal/agent"
	"triage/internal/clip"
	"triage/internal/dispatcher"
	"triage/internal/instructions"
	"triage/internal/prompt"
)

// opener is what the opening turns of a Processor may offer: the
// candidate scenarios with their look-ups, and the look-ups' declarations
// (the first scenario that declares a name gives its declaration).
type opener struct {
	cands   []prompt.Candidate
	names   []string
	lookUps []*instructions.Function
	// serial marks the look-ups with a required argument that only a
	// serial number can fill (from: serials, or serials_or_attachments:
	// then an attachment the model is sent may hold it).
	serial map[string]string
}

// newOpener lists the scenarios detection offers (none for follow-ups)
// and, for each, the functions it declares that tools are neither effects
// nor final: look-ups that change nothing and send nothing.
func newOpener(set *instructions.Scenarios, tools *instructions.Tools) opener {
	o := opener{serial: map[string]string{}}
	for _, sc := range set.Scenarios {
		if sc.FollowUp {
			continue
		}
		c := prompt.Candidate{Choice: prompt.Choice{Name: sc.Name, Description: sc.Description}}
		for i := range sc.Functions {
			f := &sc.Functions[i]
			t := tools.Get(f.Name)
			if t == nil || t.Effect || t.Final {
				continue
			}
			c.LookUps = append(c.LookUps, f.Name)
			if !slices.ContainsFunc(o.lookUps, func(g *instructions.Function) bool { return g.Name == f.Name }) {
				o.lookUps = append(o.lookUps, f)
				required, _ := f.Parameters["required"].([]any)
				for _, r := range required {
					name, _ := r.(string)
					if a := t.Args[name]; a != nil && (a.From == instructions.FromSerials || a.From == instructions.FromSerialsOrAttachments) {
						o.serial[f.Name] = a.From
					}
				}
			}
		}
		o.cands = append(o.cands, c)
		o.names = append(o.names, sc.Name)
	}
	return o
}

// offers is what the opening turn of an email offers: every candidate,
// and the look-ups the email can feed. A look-up that needs a serial
// number is left out when the message has none (and, for
// serials_or_attachments, the model is sent no attachment): the
// dispatcher would refuse any serial the model gave it.
func (o opener) offers(facts prompt.Facts, seen int) (cands []prompt.Candidate, lookUps []*instructions.Function) {
	can := func(name string) bool {
		switch o.serial[name] {
		case "":
			return true
		case instructions.FromSerialsOrAttachments:
			return len(facts.SerialNumbers) > 0 || seen > 0
		default:
			return len(facts.SerialNumbers) > 0
		}
	}
	for _, c := range o.cands {
		c.LookUps = slices.DeleteFunc(slices.Clone(c.LookUps), func(n string) bool { return !can(n) })
		cands = append(cands, c)
	}
	for _, f := range o.lookUps {
		if can(f.Name) {
			lookUps = append(lookUps, f)
		}
	}
	return cands, lookUps
}

// declarations are the opening turn's: choose_scenario, then lookUps.
// Built per email: the SDK may touch what it is given.
func (o opener) declarations(lookUps []*instructions.Function) []*genai.FunctionDeclaration {
	decls := []*genai.FunctionDeclaration{{
		Name:        prompt.ChooseScenario,
		Description: "Choose the scenario that fits this email, from the list in the instructions. Call it exactly once.",
		ParametersJsonSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"scenario": map[string]any{"type": "string", "enum": slices.Clone(o.names)},
				"reason":   map[string]any{"type": "string", "description": "One short sentence: why this scenario."},
			},
			"required": []any{"scenario", "reason"},
		},
	}}
	for _, f := range lookUps {
		decls = append(decls, &genai.FunctionDeclaration{Name: f.Name, Description: f.Description, ParametersJsonSchema: f.Parameters})
	}
	return decls
}

// open is detection when the rules are unsure (why: unsure) and a model
// may choose: the email's first turn is sent with the candidates and
// their look-ups (facts without a scenario, the customer's new text
// without the quoted history, as detection reads it, and the attachments
// the model is sent, where a serial may be read). A turn that
// names exactly one offered scenario chooses it (MethodModel, the
// turn kept in Opened); a model error, an unusable answer, no choice,
// several, or a name not offered falls back as detection does, and the
// turn is dropped unanswered: none of its calls runs.
func (p *Processor) open(ctx context.Context, e *email, unsure string) DetectResult {
	d := p.cfg.Detector
	cands, lookUps := p.opener.offers(e.facts, len(e.inline))
	o, err := p.cfg.Agent.Open(ctx, agent.Request{
		System:    prompt.Opening(cands),
		Prompt:    prompt.User(e.facts, e.text, ""),
		Parts:     e.inline,
		Functions: p.opener.declarations(lookUps),
	})
	res := DetectResult{ModelCalls: o.ModelCalls, Usage: o.Usage}
	if err == nil {
		var sc *instructions.Scenario
		var why string
		if sc, why, err = d.choice(o.Calls()); err == nil {
			res.Scenario, res.Method, res.Opened = sc, MethodModel, &o
			res.Reason = sc.Name + ": " + clip.Line(why, maxReason)
			return res
		}
	}
	return d.fallback(res, fmt.Sprintf("%s; model unavailable: %v", unsure, err))
}

// choice reads the scenario the opening turn's calls chose: exactly one
// choose_scenario call naming an offered scenario; its reason.
func (d *Detector) choice(calls []agent.ToolCall) (*instructions.Scenario, string, error) {
	var chose []agent.ToolCall
	for _, c := range calls {
		if c.Name == prompt.ChooseScenario {
			chose = append(chose, c)
		}
	}
	switch len(chose) {
	case 0:
		return nil, "", errors.New("detect: the first turn chose no scenario (no " + prompt.ChooseScenario + " call)")
	case 1:
	default:
		return nil, "", fmt.Errorf("detect: the first turn called %s %d times", prompt.ChooseScenario, len(chose))
	}
	name, ok := chose[0].Args["scenario"].(string)
	if !ok {
		return nil, "", fmt.Errorf("detect: %s without a scenario name", prompt.ChooseScenario)
	}
	sc, err := d.offered(name)
	if err != nil {
		return nil, "", err
	}
	why, _ := chose[0].Args["reason"].(string)
	return sc, why, nil
}

// answerOpening answers the calls of the opening turn under the chosen
// scenario, as the turn before the loop's (session turn 1): the choice
// with the scenario's name, every other call through the session's
// CallOpening (a look-up the scenario declares runs; a function it does
// not declare is refused unknown_function, an effect or the reply
// not_in_opening_turn, unrun). It returns the turns the loop goes on from:
// none when the turn only chose, so that the loop starts as the scenario's
// loop always does.
func answerOpening(ctx context.Context, session *dispatcher.Session, sc *instructions.Scenario, o *agent.Opened) []*genai.Content {
	calls := o.Calls()
	var rest []agent.ToolCall
	for _, c := range calls {
		if c.Name != prompt.ChooseScenario {
			rest = append(rest, c)
		}
	}
	if len(rest) == 0 {
		return nil
	}
	session.StartTurn()
	answered := session.CallOpening(ctx, rest)
	resps := make([]agent.Response, len(calls))
	for i, c := range calls {
		if c.Name == prompt.ChooseScenario {
			resps[i] = agent.Succeeded(map[string]any{"scenario": sc.Name})
			continue
		}
		resps[i], answered = answered[0], answered[1:]
	}
	return o.Turns(resps)
}
