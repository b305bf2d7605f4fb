// What the conversation so far says: the function responses, read back
// with the calls they answer.

package model

import (
	"google.golang.org/genai"

	"triage/internal/prompt"
)

// outcome is one function response from the history, with the arguments of
// the call it answers.
type outcome struct {
	name    string
	ok      bool
	result  map[string]any
	errCode string
	errMsg  string
	args    map[string]any
	// prefetched: a look-up the shop ran before the first turn (the
	// prompt's look-ups block), not a call of the model's.
	prefetched bool
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

// basis is the decision's basis a result carries (check_warranty's
// decision: {basis: ...}); "" when it carries none.
func (o outcome) basis() string {
	d, _ := o.result["decision"].(map[string]any)
	b, _ := d["basis"].(string)
	return b
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
			// The opening turn's choice is the pipeline's business, not a
			// function result the reply could quote.
			if fc := p.FunctionCall; fc != nil && fc.Name == prompt.ChooseScenario {
				continue
			}
			if fr := p.FunctionResponse; fr != nil && fr.Name == prompt.ChooseScenario {
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

// addLookups puts the look-ups the shop ran before the first turn (the
// prompt's look-ups block) before the history's own results: they were
// answered first.
func (h *history) addLookups(ls []prompt.Lookup) {
	if len(ls) == 0 {
		return
	}
	pre := make([]outcome, 0, len(ls)+len(h.results))
	for _, l := range ls {
		o := envelope(l.Function, l.Response)
		o.args, o.prefetched = l.Args, true
		pre = append(pre, o)
	}
	h.results = append(pre, h.results...)
}

// prefetchedOnly reports whether every outcome is a look-up the shop ran.
func prefetchedOnly(os []outcome) bool {
	for _, o := range os {
		if !o.prefetched {
			return false
		}
	}
	return true
}

// answeredFor reports whether one of os answers a call for serial sn.
func answeredFor(os []outcome, sn string) bool {
	for _, o := range os {
		if o.args["serial_number"] == sn {
			return true
		}
	}
	return false
}
