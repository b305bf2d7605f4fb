package eval

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"triage"
	"triage/internal/clients/tickets"
	"triage/internal/dispatcher"
	"triage/internal/grounding"
	"triage/internal/language"
	"triage/internal/processor"
)

// FollowUp is the customer's next message after our reply (input.follow_ups):
// it answers our last reply (In-Reply-To, References) from the same sender.
type FollowUp struct {
	Subject string `yaml:"subject" json:"subject,omitempty"` // default "Re: " + the first email's subject
	Body    string `yaml:"body" json:"body"`
	// Expected is checked against this message's outcome (optional).
	Expected *Expected `yaml:"expected_output" json:"expected_output,omitempty"`
}

// SimulatedCustomer lets a model play the customer after our reply, in live
// runs (input.simulated_customer).
type SimulatedCustomer struct {
	Persona  string `yaml:"persona" json:"persona"`
	Goal     string `yaml:"goal" json:"goal"`
	MaxTurns int    `yaml:"max_turns" json:"max_turns,omitempty"` // customer messages after the first (default 2, at most 5)
}

// placeholder matches template text a reply must never carry: [name],
// {{...}}, <serial>, XXX, TODO, TBD. Bracketed words need three letters, so
// a language tag such as [PL] is not one.
var placeholder = regexp.MustCompile(`\{\{[^}]*\}\}|\[[\p{L}_ ]{3,30}\]|<[a-z_]{3,30}>|\bXXX+\b|\bTODO\b|\bTBD\b`)

// Placeholders returns the placeholder texts in body, in order.
func Placeholders(body string) []string {
	var out []string
	for _, m := range placeholder.FindAllString(body, 10) {
		if strings.HasPrefix(m, "<") && strings.Contains(m, "@") {
			continue
		}
		out = append(out, m)
	}
	return out
}

// customerReplies are the bodies of the replies that ran (send_email, not
// refused), with their call index.
func customerReplies(o processor.Outcome) (idx []int, bodies []string) {
	for i, c := range o.FunctionCalls {
		if c.Name != dispatcher.FuncSendEmail || c.Blocked || !c.OK {
			continue
		}
		body, _ := c.Args["body"].(string)
		idx, bodies = append(idx, i), append(bodies, body)
	}
	return idx, bodies
}

// ReplyChecks are the deterministic reply checks that run in every mode: no
// placeholder text in any reply, and the case's reply_language and
// reply_mentions_results. lang detects the reply's language (nil: package
// language's defaults).
func ReplyChecks(x Expected, o processor.Outcome, lang *language.Detector) []string {
	var out []string
	idx, bodies := customerReplies(o)
	for k, body := range bodies {
		if ph := Placeholders(body); len(ph) > 0 {
			out = append(out, fmt.Sprintf("Call %d send_email: Body contains placeholder text %s", idx[k]+1, strings.Join(quoteAll(ph), ", ")))
		}
	}
	if x.ReplyLanguage == "" && len(x.ReplyMentionsResults) == 0 {
		return out
	}
	if len(bodies) == 0 {
		return append(out, "Reply: expected a reply to check (reply_language, reply_mentions_results), but no send_email ran")
	}
	body := bodies[len(bodies)-1]
	if x.ReplyLanguage != "" {
		if lang == nil {
			lang = defaultDetector()
		}
		if got := lang.Detect(body); got != x.ReplyLanguage {
			out = append(out, fmt.Sprintf("Reply language: expected %q, the reply reads as %q", x.ReplyLanguage, got))
		}
	}
	for _, ref := range x.ReplyMentionsResults {
		fn, key, _ := strings.Cut(ref, ".")
		val, ok := resultValue(o, fn, key)
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("Reply mentions %s: no successful %s call returned %q", ref, fn, key))
		case !mentions(body, val):
			out = append(out, fmt.Sprintf("Reply mentions %s: the reply does not state %q", ref, val))
		}
	}
	return out
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// defaultDetector is package language's default detector, built once.
var defaultDetector = sync.OnceValue(func() *language.Detector {
	d, err := language.New(language.Config{})
	if err != nil {
		panic("eval: the default language detector: " + err.Error()) // the defaults are the package's own
	}
	return d
})

// resultValue is the last successful call of fn's result key, as text.
func resultValue(o processor.Outcome, fn, key string) (string, bool) {
	for i := len(o.FunctionCalls) - 1; i >= 0; i-- {
		c := o.FunctionCalls[i]
		if c.Name != fn || !c.OK || c.Blocked {
			continue
		}
		v, ok := c.Result[key]
		if !ok || v == nil {
			return "", false
		}
		if s, ok := v.(string); ok {
			return s, s != ""
		}
		return show(v), true
	}
	return "", false
}

// mentions reports whether body states val: as written, or, for an ISO
// date, in any written form the grounding check reads as that day (31.05.2027,
// 31 maja 2027, May 31, 2027, 31. Mai 2027, ...).
func mentions(body, val string) bool {
	return containsFold(body, val) || grounding.MentionsDate(body, val)
}

// checkReplyExpectations validates the reply expectations of x (field is
// its path in the case, for messages).
func (v *checker) checkReplyExpectations(x *Expected, path ...any) {
	field := "expected_output"
	if len(path) > 1 {
		field = fmt.Sprint(path...)
	}
	if x.ReplyLanguage != "" && !regexp.MustCompile(`^[a-z]{2}$`).MatchString(x.ReplyLanguage) {
		v.fail(v.lineOf(append(path, "reply_language")...), "%s.reply_language %q: want an ISO 639-1 code such as pl, en, de", field, x.ReplyLanguage)
	}
	known := v.allFunctions()
	for i, ref := range x.ReplyMentionsResults {
		fn, key, ok := strings.Cut(ref, ".")
		switch {
		case !ok || fn == "" || key == "":
			v.fail(v.lineOf(append(path, "reply_mentions_results", i)...), "%s.reply_mentions_results[%d] %q: want FUNCTION.RESULT_KEY, e.g. check_warranty.expiration_date", field, i, ref)
		case !known[fn]:
			v.fail(v.lineOf(append(path, "reply_mentions_results", i)...), "%s.reply_mentions_results[%d]: no loaded scenario declares function %q", field, i, fn)
		}
	}
	for i, c := range x.ReplyRubric {
		if strings.TrimSpace(c) == "" {
			v.fail(v.lineOf(append(path, "reply_rubric", i)...), "%s.reply_rubric[%d] is empty; say what the reply must do", field, i)
		}
	}
	if len(x.ReplyRubric) > 20 {
		v.fail(v.lineOf(append(path, "reply_rubric")...), "%s.reply_rubric: at most 20 criteria, got %d", field, len(x.ReplyRubric))
	}
}

// checkTurns validates input.follow_ups and input.simulated_customer.
func (v *checker) checkTurns() {
	in := v.c.Input
	if len(in.FollowUps) > 0 && in.Email == nil {
		v.fail(v.lineOf("input", "follow_ups"), "input.follow_ups needs input.email (the sender and subject the follow-ups answer)")
	}
	if len(in.FollowUps) > MaxFollowUps {
		v.fail(v.lineOf("input", "follow_ups"), "input.follow_ups: at most %d, got %d", MaxFollowUps, len(in.FollowUps))
	}
	for i, f := range in.FollowUps {
		if strings.TrimSpace(f.Body) == "" {
			v.fail(v.lineOf("input", "follow_ups", i), "input.follow_ups[%d].body is required", i)
		}
		if f.Expected != nil {
			x := f.Expected
			if x.Status != "" && !x.Status.Valid() {
				v.fail(v.lineOf("input", "follow_ups", i, "expected_output", "status"), "input.follow_ups[%d].expected_output.status %q: want one of %s", i, x.Status, statusList())
			}
			if x.Match != "" && !slices.Contains(matchModes, x.Match) {
				v.fail(v.lineOf("input", "follow_ups", i, "expected_output", "match"), "input.follow_ups[%d].expected_output.match %q: want one of %s", i, x.Match, strings.Join(matchModes, ", "))
			}
			for j := range x.ExpectedFunctionCalls {
				x.ExpectedFunctionCalls[j].Arguments = jsonMap(x.ExpectedFunctionCalls[j].Arguments)
				x.ExpectedFunctionCalls[j].ArgumentsContain = jsonMap(x.ExpectedFunctionCalls[j].ArgumentsContain)
				x.ExpectedFunctionCalls[j].ResultContains = jsonMap(x.ExpectedFunctionCalls[j].ResultContains)
			}
			v.checkReplyExpectations(x, "input", "follow_ups", i, "expected_output")
		}
	}
	if sc := in.SimulatedCustomer; sc != nil {
		if strings.TrimSpace(sc.Persona) == "" || strings.TrimSpace(sc.Goal) == "" {
			v.fail(v.lineOf("input", "simulated_customer"), "input.simulated_customer needs persona and goal")
		}
		if sc.MaxTurns < 0 || sc.MaxTurns > MaxSimulatedTurns {
			v.fail(v.lineOf("input", "simulated_customer", "max_turns"), "input.simulated_customer.max_turns: between 1 and %d", MaxSimulatedTurns)
		}
		if in.Email == nil {
			v.fail(v.lineOf("input", "simulated_customer"), "input.simulated_customer needs input.email")
		}
	}
}

// Bounds of multi-turn cases.
const (
	MaxFollowUps      = 5
	MaxSimulatedTurns = 5
)

// TurnResult is one later message of a multi-turn case: a scripted
// follow-up or a simulated customer's message.
type TurnResult struct {
	Body     string            `json:"body"`
	Outcome  processor.Outcome `json:"outcome"`
	Failures []string          `json:"failures,omitempty"`
	// Rubric grades the turn's reply against its expected_output's
	// reply_rubric; Claims and Grounding are its grounding checks, as for
	// the case's email.
	Rubric    []RubricVerdict `json:"rubric,omitempty"`
	Claims    []string        `json:"flagged_claims,omitempty"`
	Grounding Grounding       `json:"grounding"`
}

// followUpEmail renders the customer's next message: it answers inReplyTo,
// after the references so far, an hour after the previous one.
func followUpEmail(c *Case, n int, subject, body string, refs []string) ([]byte, string, error) {
	e := c.Input.Email
	if subject == "" {
		subject = e.Subject
		if !strings.HasPrefix(strings.ToLower(subject), "re:") {
			subject = "Re: " + subject
		}
	}
	rec := e.Received
	if rec == "" {
		rec = DefaultReceived
	}
	t, err := parseReceived(rec)
	if err != nil {
		return nil, "", err
	}
	h := map[string]string{}
	if len(refs) > 0 {
		h["In-Reply-To"] = refs[len(refs)-1]
		h["References"] = strings.Join(refs, " ")
	}
	id := fmt.Sprintf("%s-turn-%d", c.ID, n+1)
	raw, err := Render(id, &Email{Subject: subject, Body: body, From: e.From, Received: t.Add(time.Duration(n+1) * time.Hour).Format(time.RFC3339), Headers: h})
	return raw, "<" + messageIDFor(id) + ">", err
}

// runTurns processes the case's follow-ups (and, live, the simulated
// customer's messages) on the same pipeline and ticket store, each
// answering our previous reply; every turn's reply is checked like the
// first one's (its expectations, the reply checks, the grounding check and
// its reply_rubric).
func (r *Runner) runTurns(ctx context.Context, c *Case, proc *processor.Processor, tk tickets.Store, rr *RunResult) {
	in := c.Input
	if len(in.FollowUps) == 0 && in.SimulatedCustomer == nil {
		return
	}
	refs := []string{"<" + messageIDFor(c.ID) + ">"}
	last := rr.Outcome
	addReply := func(o processor.Outcome) {
		if o.Reply != nil && o.Reply.MessageID != "" {
			refs = append(refs, o.Reply.MessageID)
		}
	}
	addReply(last)
	run := func(n int, subject, body string, x *Expected) processor.Outcome {
		raw, id, err := followUpEmail(c, n, subject, body, refs)
		tr := TurnResult{Body: body}
		if err != nil {
			tr.Failures = append(tr.Failures, fmt.Sprintf("Turn %d: %v", n+2, err))
			rr.Turns = append(rr.Turns, tr)
			rr.Failures = append(rr.Failures, tr.Failures...)
			return processor.Outcome{}
		}
		refs = append(refs, id)
		tr.Outcome = proc.Process(ctx, processor.Input{Name: fmt.Sprintf("%s (turn %d)", c.File, n+2), Raw: raw})
		var fails []string
		if x != nil {
			fails = append(fails, Validate(&Case{ID: c.ID, Expected: *x}, tr.Outcome).Failures...)
		}
		fails = append(fails, ReplyChecks(expectedOrZero(x), tr.Outcome, r.cfg.Language)...)
		var grounded []string
		tr.Grounding, tr.Claims, grounded = r.replyClaims(ctx, raw, tr.Outcome, tk)
		fails = append(fails, grounded...)
		if x != nil && len(x.ReplyRubric) > 0 {
			var rubricFails []string
			tr.Rubric, rubricFails = r.grade(ctx, x.ReplyRubric, body, tr.Outcome)
			fails = append(fails, rubricFails...)
		}
		for _, f := range fails {
			tr.Failures = append(tr.Failures, fmt.Sprintf("Turn %d: %s", n+2, f))
		}
		rr.Turns = append(rr.Turns, tr)
		rr.Failures = append(rr.Failures, tr.Failures...)
		rr.ModelCalls += tr.Outcome.ModelCalls
		rr.Tokens.Add(tr.Outcome.Tokens)
		rr.Grounding.Add(tr.Grounding)
		addReply(tr.Outcome)
		return tr.Outcome
	}
	for i, f := range in.FollowUps {
		last = run(i, f.Subject, f.Body, f.Expected)
	}
	if sc := in.SimulatedCustomer; sc != nil {
		if r.cfg.Customer == nil || r.offlineModel() {
			rr.Notes = append(rr.Notes, "input.simulated_customer skipped: a model plays the customer only in live runs")
			rr.Goal = &RubricVerdict{Criterion: sc.Goal, Verdict: VerdictSkipped, Reason: "offline: no model played the customer, so the goal is not graded"}
			return
		}
		turns := sc.MaxTurns
		if turns == 0 {
			turns = 2
		}
		conv := []CustomerTurn{{Customer: true, Text: c.Input.Email.Body}}
		conv = appendReply(conv, rr.Outcome)
		for _, t := range rr.Turns {
			conv = append(conv, CustomerTurn{Customer: true, Text: t.Body})
			conv = appendReply(conv, t.Outcome)
		}
		for n := len(in.FollowUps); n < len(in.FollowUps)+turns; n++ {
			if last.Status == triage.StatusSkipped || last.Status == triage.StatusFailed {
				break
			}
			msg, done, err := r.cfg.Customer.Next(ctx, *sc, conv)
			if err != nil {
				rr.Failures = append(rr.Failures, fmt.Sprintf("Simulated customer: %v", err))
				rr.Goal = &RubricVerdict{Criterion: sc.Goal, Verdict: VerdictError, Reason: "the simulated conversation did not finish: " + err.Error()}
				return
			}
			if done {
				break
			}
			conv = append(conv, CustomerTurn{Customer: true, Text: msg})
			last = run(n, "", msg, nil)
			conv = appendReply(conv, last)
		}
		r.gradeGoal(ctx, sc.Goal, conv, rr)
	}
}

func appendReply(conv []CustomerTurn, o processor.Outcome) []CustomerTurn {
	_, bodies := customerReplies(o)
	if len(bodies) == 0 {
		return conv
	}
	return append(conv, CustomerTurn{Text: bodies[len(bodies)-1]})
}

func expectedOrZero(x *Expected) Expected {
	if x == nil {
		return Expected{}
	}
	return *x
}

// gradeRubric grades the reply to the case's email against reply_rubric.
func (r *Runner) gradeRubric(ctx context.Context, c *Case, rr *RunResult) {
	if len(c.Expected.ReplyRubric) == 0 {
		return
	}
	email := ""
	if c.Input.Email != nil {
		email = c.Input.Email.Subject + "\n\n" + c.Input.Email.Body
	} else {
		email = string(c.Raw)
	}
	var fails []string
	rr.Rubric, fails = r.grade(ctx, c.Expected.ReplyRubric, email, rr.Outcome)
	rr.Failures = append(rr.Failures, fails...)
}

// grade grades the last reply of o to email against the criteria: by the
// judge in live runs; otherwise every criterion is skipped, never passed.
// It returns the verdicts and a failure per criterion that did not pass.
func (r *Runner) grade(ctx context.Context, crit []string, email string, o processor.Outcome) ([]RubricVerdict, []string) {
	if r.cfg.Judge == nil || r.offlineModel() || r.mode == ModeReplay {
		return skippedVerdicts(crit, "offline: a rubric is graded only by a model judge in live runs"), nil
	}
	_, bodies := customerReplies(o)
	if len(bodies) == 0 {
		return skippedVerdicts(crit, "no reply to grade"), []string{"Rubric: expected a reply to grade, but no send_email ran"}
	}
	// Every verdict the judge could not give (an answer that is not the
	// requested JSON, a quote that is not in the reply) is an error verdict
	// that says why: one failure each.
	verdicts, _ := r.cfg.Judge.Grade(ctx, email, bodies[len(bodies)-1], crit)
	var fails []string
	for _, v := range verdicts {
		switch v.Verdict {
		case VerdictFail:
			fails = append(fails, fmt.Sprintf("Rubric: %q failed: %s (quote %q)", v.Criterion, v.Reason, v.Quote))
		case VerdictError:
			fails = append(fails, fmt.Sprintf("Rubric: %q: error, not graded: %s", v.Criterion, v.Reason))
		}
	}
	return verdicts, fails
}

// gradeGoal grades whether the simulated conversation reached the
// customer's goal (input.simulated_customer.goal): by the judge in live
// runs, its quote checked against our replies; it fails the run unless
// the judge says the goal was reached.
func (r *Runner) gradeGoal(ctx context.Context, goal string, conv []CustomerTurn, rr *RunResult) {
	if r.cfg.Judge == nil {
		rr.Goal = &RubricVerdict{Criterion: goal, Verdict: VerdictSkipped, Reason: "no judge: a goal is graded only by a model judge in live runs"}
		return
	}
	v, _ := r.cfg.Judge.GradeGoal(ctx, goal, conv)
	rr.Goal = &v
	switch v.Verdict {
	case VerdictFail:
		rr.Failures = append(rr.Failures, fmt.Sprintf("Goal: %q not reached: %s (quote %q)", goal, v.Reason, v.Quote))
	case VerdictError:
		rr.Failures = append(rr.Failures, fmt.Sprintf("Goal: %q: error, not graded: %s", goal, v.Reason))
	}
}

// FlaggedClaims are the claims the grounding check refused in the outcome's
// replies (send_email calls blocked with ungrounded_claim), as the
// dispatcher named them.
func FlaggedClaims(o processor.Outcome) []string {
	var out []string
	for i, c := range o.FunctionCalls {
		if c.Blocked && c.Error != nil && c.Error.Code == dispatcher.CodeUngroundedClaim {
			out = append(out, fmt.Sprintf("call %d %s: %s", i+1, c.Name, c.Error.Message))
		}
	}
	return out
}
