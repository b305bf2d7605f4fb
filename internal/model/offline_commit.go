// What the offline model's reply declares: the decision it is written on
// and what it commits to, consistent with what composeBody writes.

package model

import (
	"slices"

	"google.golang.org/genai"
)

// declareCommitments adds the decision and commitments parameters to the
// reply's args where reply declares them: the basis of the last decision a
// result carries, and what composeBody's text promises for it (a free
// repair or replacement on a statutory claim, a paid repair quote when
// nothing covers it, a ticket it names, a person who will answer), only
// values the parameter's enum offers; [none] when it promises nothing.
func declareCommitments(args map[string]any, reply *genai.FunctionDeclaration, h *history) {
	props, _ := schema(reply)
	basis, ticket, told := "", false, false
	for _, c := range h.results {
		if c.name == reply.Name || !c.ok {
			continue
		}
		if b := c.basis(); b != "" {
			basis = b
		}
		if id, _ := c.result["ticket_id"].(string); id != "" {
			ticket = true
		}
		if c.result["notified"] != nil {
			told = true
		}
	}
	if _, ok := props["decision"]; ok && basis != "" {
		args["decision"] = basis
	}
	p, ok := props["commitments"].(map[string]any)
	if !ok {
		return
	}
	var want []string
	switch basis {
	case "statutory":
		want = append(want, "repair", "replacement")
	case "none":
		want = append(want, "paid_repair_quote")
	}
	if ticket {
		want = append(want, "ticket")
	}
	if told {
		want = append(want, "callback")
	}
	items, _ := p["items"].(map[string]any)
	enum, _ := items["enum"].([]any)
	cs := []any{}
	for _, w := range want {
		if len(enum) == 0 || slices.Contains(enum, any(w)) {
			cs = append(cs, w)
		}
	}
	if len(cs) == 0 {
		cs = append(cs, "none")
	}
	args["commitments"] = cs
}
