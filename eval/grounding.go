package eval

import (
	"context"
	"fmt"
	"time"

	"triage/internal/clients/tickets"
	"triage/internal/dispatcher"
	"triage/internal/grounding"
	"triage/internal/message"
	"triage/internal/processor"
	"triage/internal/prompt"
)

// Grounding counts what the grounding checks saw in a run's replies.
type Grounding struct {
	// Replies are the customer replies that ran (send_email, not refused);
	// Claims the facts their subjects and bodies state, each checked.
	Replies int `json:"replies"`
	Claims  int `json:"claims_checked"`
	// Flagged counts the refusals of the dispatcher's check (grounded:
	// true) and the claims of a sent reply that nothing backs.
	Flagged int `json:"flagged"`
}

// Add adds g2's counts to g.
func (g *Grounding) Add(g2 Grounding) {
	g.Replies += g2.Replies
	g.Claims += g2.Claims
	g.Flagged += g2.Flagged
}

// replyClaims runs the grounding check on every reply of o that ran,
// whether or not tools.yaml declares send_email grounded: each claim of its
// subject and body must be backed by what the pipeline gave the model,
// rebuilt from the outcome (raw is the email it answered; tk the run's
// ticket store). It returns the counts, the flagged claims (the
// dispatcher's refusals first) and a failure per unsupported claim of a
// sent reply.
func (r *Runner) replyClaims(ctx context.Context, raw []byte, o processor.Outcome, tk tickets.Store) (g Grounding, flagged, failures []string) {
	flagged = FlaggedClaims(o)
	g.Flagged = len(flagged)
	var src *grounding.Sources
	for i, c := range o.FunctionCalls {
		if c.Name != dispatcher.FuncSendEmail || c.Blocked || !c.OK {
			continue
		}
		if src == nil {
			src = r.sourcesOf(ctx, raw, o, tk)
		}
		g.Replies++
		for _, arg := range []string{"subject", "body"} {
			text, _ := c.Args[arg].(string)
			g.Claims += len(grounding.Claims(text))
			for _, cl := range src.Unsupported(text) {
				g.Flagged++
				flagged = append(flagged, fmt.Sprintf("call %d %s: the sent %s states %s", i+1, c.Name, arg, cl))
				failures = append(failures, fmt.Sprintf("Call %d send_email: the %s states %s, which nothing this email gave the model backs (grounding)", i+1, arg, cl))
			}
		}
	}
	return g, flagged, failures
}

// sourcesOf rebuilds what the model was given for the email raw, as the
// dispatcher collects it: the instructions (main.md and the scenario), the
// email's addresses and date, the trusted facts and the ticket (read back
// from the run's store), the customer's language, and every successful
// function result; the customer's own words (the email's subject, text and
// quoted history, the fields of the user turn they wrote, the attachments'
// names, the ticket's summary, subjects and notes) back only what a reply
// quotes as theirs.
func (r *Runner) sourcesOf(ctx context.Context, raw []byte, o processor.Outcome, tk tickets.Store) *grounding.Sources {
	var src grounding.Sources
	if sc := r.cfg.Scenarios.Get(o.Scenario); sc != nil {
		src.AddText(prompt.System(r.cfg.Scenarios.Main, sc.Body))
		src.AddText(sc.Body)
	}
	facts := prompt.Facts{Scenario: o.Scenario, From: o.From, Subject: o.Subject, Language: o.Language, SerialNumbers: o.SerialNumbers}
	if m, err := message.Parse(raw); err == nil {
		facts.ReplyTo = m.ReplyTo
		if !m.Date.IsZero() {
			facts.Received = m.Date.UTC().Format(time.RFC3339)
			src.AddText(m.Date.Format("2006-01-02"))
		}
		src.AddText(prompt.Trusted(facts))
		src.AddCustomerText(prompt.Written(facts))
		for _, t := range []string{m.Subject, m.Text, m.Quoted} {
			src.AddCustomerText(t)
		}
		for _, t := range []string{m.From.Address, m.ReplyTo} {
			src.AddText(t)
		}
	}
	for _, a := range o.Attachments {
		src.AddCustomerText(a.Name)
	}
	src.AddText(o.TicketID)
	src.AddLanguage(o.Language)
	if o.TicketID != "" && tk != nil {
		if st, err := tk.Get(ctx, o.TicketID); err == nil {
			src.AddValue([]string{st.TicketID, st.Status, st.SerialNumber, st.CreatedAt.UTC().Format(time.RFC3339)})
			src.AddCustomerText(st.Summary)
			for _, m := range st.Messages {
				src.AddValue(m.At.UTC().Format(time.RFC3339))
				src.AddCustomerText(m.Subject)
			}
			for _, n := range st.Notes {
				src.AddCustomerText(n.Text) // a follow-up's text
			}
		}
	}
	for _, c := range o.FunctionCalls {
		if c.OK && !c.Blocked {
			src.AddValue(c.Result)
		}
	}
	return &src
}
