// The steps of one email, from its raw bytes to its Outcome.

package processor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/genai"

	"triage"
	"triage/internal/agent"
	"triage/internal/clients/tickets"
	"triage/internal/clip"
	"triage/internal/dispatcher"
	"triage/internal/guard"
	"triage/internal/instructions"
	"triage/internal/language"
	"triage/internal/message"
	"triage/internal/prompt"
	"triage/internal/trace"
)

// process takes one email through its steps, in order: parse, claim (see
// Config.Claim), screen, gather the facts, join its conversation, the loop
// and per-sender bounds, choose the scenario, and answer (the agent run,
// then verify). Each step but the last either leaves the email and the
// outcome to the next or ends the outcome (it returns true).
func (p *Processor) process(ctx context.Context, e *email) Outcome {
	in := e.in
	out := Outcome{File: in.Name, Model: p.cfg.ModelName, DryRun: p.cfg.DryRun}
	if p.parse(e, &out) {
		return out
	}
	// Every line logged about this email from here on names it.
	ctx = trace.WithLogAttrs(ctx, "key", out.Key, "message_id", out.MessageID)
	if p.cfg.Claim != nil {
		release, err := p.cfg.Claim(ctx, out.Key)
		if err != nil {
			out.fail(triage.ReasonHistoryError, fmt.Sprintf("%v; whether another run answered this message cannot be told, left for a person", err))
			return out
		}
		defer release()
	}
	if p.screen(ctx, e, &out) ||
		p.gather(e, &out) ||
		p.join(ctx, e, &out) ||
		p.bounded(ctx, e, &out) ||
		p.choose(ctx, e, &out) {
		return out
	}
	p.answer(ctx, e, &out)
	return out
}

// email is what the steps of process learn of one message.
type email struct {
	in      Input
	msg     *message.Message
	listed  []message.Attachment // the attachments the outcome and the facts name (capped)
	facts   prompt.Facts
	text    string         // the customer's text, cut to Config.MaxTextBytes
	quoted  string         // the quoted text, cut to half of that
	inline  []*genai.Part  // the attachments the model is sent
	conv    *tickets.State // the conversation this message follows up, or nil
	convWhy string         // how conv was found
	earlier int            // the customer's messages on conv before this one
	// langSure: the message's own text told its language (out.Language);
	// false: the default, which the conversation's language may replace.
	langSure bool
	sc       *instructions.Scenario
	opened   *agent.Opened      // the first turn, when it chose sc (MethodModel)
	verdict  dispatcher.Verdict // what the agent run's calls came to (answer)
}

// fail ends out as failed for reason; it returns true (the step ends the
// email).
func (out *Outcome) fail(reason triage.Reason, detail string) bool {
	out.Status, out.Reason, out.Detail = triage.StatusFailed, reason, detail
	return true
}

// skip ends out as skipped for reason; it returns true.
func (out *Outcome) skip(reason triage.Reason, detail string) bool {
	out.Status, out.Reason, out.Detail = triage.StatusSkipped, reason, detail
	return true
}

// parse reads the message and fills what the outcome says of it: its
// headers, its attachments (capped) and its Key.
func (p *Processor) parse(e *email, out *Outcome) bool {
	msg, err := message.ParseLimits(e.in.Raw, p.cfg.HeaderLimits)
	if err != nil {
		return out.fail(triage.ReasonParseError, err.Error())
	}
	e.msg = msg
	out.MessageID = msg.MessageID
	out.From = msg.From.Address
	out.FromName = msg.From.Name
	out.Subject = msg.Subject
	out.Problems = msg.Problems
	listed, attOmitted := capList(msg.Attachments, MaxAttachmentsListed)
	e.listed = listed
	out.AttachmentsOmitted = attOmitted + msg.PartsNotRead
	for _, a := range listed {
		out.Attachments = append(out.Attachments, AttachmentInfo{Name: a.Name, Type: a.Type, Size: a.Size})
	}
	out.Key = e.in.Key
	if out.Key == "" {
		out.Key = triage.KeyOf(msg, e.in.Raw)
	}
	return false
}

// screen ends what gets no answer from the model: a message with two
// senders (failed), a machine's mail (skipped), a message with no usable
// sender, a canceled run, and a
// message with a Key an earlier run answered (that reply again, or a
// reused Key for a person).
func (p *Processor) screen(ctx context.Context, e *email, out *Outcome) bool {
	msg := e.msg
	// Two senders before all else: which one wrote it cannot be told, and
	// the receiving server's DMARC check may have read the other.
	if msg.FromMailboxes > 1 {
		return out.fail(triage.ReasonAmbiguousSender, fmt.Sprintf("the From fields name %d mailboxes; which one wrote the message cannot be told, so it is not answered: left for a person", msg.FromMailboxes))
	}
	// Machines first: a bounce with an unusable From is skipped, not failed.
	if v := guard.Check(p.cfg.Guard, msg); v.Skip {
		return out.skip(v.Reason, v.Detail)
	}
	if msg.From.Address == "" {
		return out.fail(triage.ReasonNoSender, "no usable From address; left for a person")
	}
	if err := ctx.Err(); err != nil {
		return out.fail(triage.ReasonCanceled, err.Error())
	}
	if p.cfg.Answered == nil {
		return false
	}
	rc, inbound, err := p.cfg.Answered(ctx, out.Key)
	switch {
	case err != nil:
		return out.fail(triage.ReasonHistoryError, fmt.Sprintf("reply history: %v; whether this message was answered cannot be told, left for a person", err))
	case rc != nil && inbound != "" && inbound != triage.DigestOf(msg):
		return out.fail(triage.ReasonDuplicateKey, fmt.Sprintf("the reply %s answers another message with the same Message-ID and sender; a person answers this one", cmp.Or(rc.Path, rc.MessageID)))
	case rc != nil:
		// Answered by an earlier run: nothing runs again.
		out.Status, out.Reply, out.TicketID = triage.StatusReplied, rc, tickets.TagInSubject(rc.Subject)
		if rc.Drafted {
			out.Status = triage.StatusDrafted
		}
		return true
	}
	return false
}

// truncated marks where a text the model reads was cut.
const truncated = "\n[... truncated ...]"

// gather extracts the serials and the language, cuts the texts the model
// reads and builds its facts, with the attachments it is sent.
func (p *Processor) gather(e *email, out *Outcome) bool {
	msg := e.msg
	out.SerialNumbers, out.SerialsOmitted = capList(p.cfg.Extractor.Extract(msg.Subject+"\n"+msg.Text, msg.Quoted), MaxSerialsListed)
	// The text alone first: a subject in another language over the text
	// ("Reklamacja" over Portuguese or Spanish) made mixes lingua named
	// Czech or German with confidence. The subject counts only when the
	// text is too short to be judged on its own.
	lang := p.cfg.Language.Judge(msg.Text)
	if !lang.Clear && language.Words(msg.Text) < language.MinWords {
		lang = p.cfg.Language.Judge(msg.Subject + "\n" + msg.Text)
	}
	out.Language, e.langSure = lang.Code, lang.Sure
	e.text = clip.Bytes(msg.Text, p.cfg.MaxTextBytes, truncated)
	e.quoted = clip.Bytes(msg.Quoted, p.cfg.MaxTextBytes/2, truncated)
	replyTo, setAside := p.cfg.Dispatcher.ReplyAddress(msg)
	if setAside != "" {
		out.Problems = append(out.Problems, setAside)
	}
	e.facts = prompt.Facts{
		From:            msg.From.Address,
		ReplyTo:         replyTo,
		Subject:         msg.Subject,
		Language:        p.replyLanguage(out.Language),
		DefaultLanguage: p.cfg.Language.Default(),
		SerialNumbers:   out.SerialNumbers,

		SerialsOmitted:     out.SerialsOmitted,
		AttachmentsOmitted: out.AttachmentsOmitted,
	}
	if !msg.Date.IsZero() {
		e.facts.Received = msg.Date.UTC().Format(time.RFC3339)
	}
	for _, a := range e.listed {
		e.facts.Attachments = append(e.facts.Attachments, prompt.Attachment(a))
	}
	inline, err := p.attachments(e.in.Raw, e.listed, msg.Heads, out, &e.facts)
	if err != nil {
		return out.fail(triage.ReasonParseError, err.Error())
	}
	e.inline = inline
	// Nothing reads the raw bytes after this: a message of megabytes is
	// not held while the model is asked.
	e.in.Raw = nil
	return false
}

// join finds the conversation a follow-up belongs to (Config.Tickets) and
// appends its text to the ticket as a note, idempotently; a conversation a
// person owns is left to them. When the dispatcher trusts an authserv-id,
// a follow-up whose sender is not authenticated is left for a person and
// the conversation untouched.
func (p *Processor) join(ctx context.Context, e *email, out *Outcome) bool {
	if p.cfg.Tickets == nil {
		return false
	}
	conv, why, err := p.conversation(ctx, e.msg)
	var stranger *strangerInOwnedThread
	if errors.As(err, &stranger) {
		out.TicketID = stranger.ticket
		return out.skip(triage.ReasonHumanOwner, err.Error())
	}
	if err != nil {
		return out.fail(triage.ReasonTicketStore, err.Error())
	}
	if conv == nil {
		return false
	}
	msg := e.msg
	if d := p.cfg.Dispatcher; d.Authenticates() {
		// From costs nothing to forge: only an authenticated message reads
		// a conversation's history, adds to it or escalates it.
		if a := d.Authenticated(msg); !a.Pass {
			return out.fail(triage.ReasonUnauthenticated, fmt.Sprintf("it would join %s (%s), but its sender is not authenticated (%s): the conversation is not read nor changed, left for a person",
				conv.TicketID, why, a.Detail))
		}
	}
	e.conv, e.convWhy = conv, why
	out.TicketID, out.Followup = conv.TicketID, true
	id := noteID(msg, out.Key)
	e.earlier = earlierInbound(conv, id)
	e.facts.Ticket = ticketFacts(conv, id)
	if !e.langSure {
		// Too short or unclear to tell: the customer's earlier messages
		// tell the language of the conversation, when they can.
		if lang := p.conversationLanguage(conv, id); lang != "" {
			out.Language, e.facts.Language = lang, p.replyLanguage(lang)
		}
	}
	if !p.cfg.DryRun { // a dry run adds no note
		_, err := p.cfg.Tickets.AddNote(ctx, conv.TicketID, tickets.Note{
			MessageID: id, From: msg.From.Address, Subject: msg.Subject, Text: e.text,
		})
		if err != nil {
			return out.fail(triage.ReasonTicketStore, err.Error())
		}
	}
	if conv.AgentDisabled {
		owner := cmp.Or(conv.Owner, "a person")
		return out.skip(triage.ReasonHumanOwner, fmt.Sprintf("%s is taken over by %s; the follow-up was appended to the ticket", conv.TicketID, owner))
	}
	return false
}

// bounded ends a possible reply loop and a message from a sender past the
// per-sender limit. A conversation the ticket store knows has its own loop
// bound when an escalation scenario exists (its third inbound message goes
// to a person, who then owns it); every other message is checked here, and
// so are a conversation's messages after its third (a person released it,
// or the escalation could not reach staff).
func (p *Processor) bounded(ctx context.Context, e *email, out *Outcome) bool {
	if e.conv == nil || p.cfg.Scenarios.Flagged(isEscalation) == nil || e.earlier > EscalateAfter {
		if reason, detail := p.loop(ctx, e.msg); reason != "" {
			return out.fail(reason, detail)
		}
	}
	if reason, detail := p.overLimit(ctx, e.msg); reason != "" {
		return out.fail(reason, detail)
	}
	return false
}

// choose detects the scenario and readies what it needs before the model
// runs: a staff address when it hands the customer to a person, a ticket
// when it escalates.
func (p *Processor) choose(ctx context.Context, e *email, out *Outcome) bool {
	det := p.detect(ctx, e)
	out.ModelCalls += det.ModelCalls
	out.Tokens.Add(det.Usage)
	out.Detection = Detection{Method: det.Method, Reason: det.Reason, FirstTurn: det.Opened != nil}
	if det.Scenario == nil {
		return out.fail(triage.ReasonNoScenario, "no scenario matched and no fallback scenario is configured: "+det.Reason)
	}
	sc := det.Scenario
	e.sc, e.opened = sc, det.Opened
	out.Scenario = sc.Name
	out.Complaint, out.HandsOff = sc.IsComplaint(len(out.SerialNumbers) > 0), sc.HandsOff()
	if sc.Asks(instructions.FactSerialNumber) && len(out.SerialNumbers) == 0 {
		out.AsksFor = []string{instructions.FactSerialNumber}
	}
	e.facts.Scenario = sc.Name

	if sc.HandsOff() && len(p.cfg.Dispatcher.Staff()) == 0 {
		p.noStaff.Do(func() {
			p.cfg.Logger.WarnContext(ctx, "no staff address configured (--staff, staff:): escalations, and replies that promise a person, are left for a person (failed, no_staff)", "scenario", sc.Name)
		})
		return out.fail(triage.ReasonNoStaff, sc.Name+" hands the customer to a person, which needs a staff address to tell (--staff, or staff: in the config); left for a person")
	}
	if sc.Escalate && out.TicketID == "" && p.cfg.Tickets != nil && !p.cfg.DryRun {
		var err error
		if out.TicketID, err = p.openForEscalation(ctx, e.msg, out.Key, out.SerialNumbers); err != nil {
			return out.fail(triage.ReasonTicketStore, err.Error())
		}
	}
	return false
}

// answer runs the agent under the scenario through a dispatcher session,
// records its calls, and has verify tell what became of the reply.
func (p *Processor) answer(ctx context.Context, e *email, out *Outcome) {
	sc := e.sc
	var r ran
	session := p.cfg.Dispatcher.Session(e.msg, sc, out.Key)
	r.draft = p.replyMode(ctx, sc, e.in.Inbox) == triage.ReplyDraft
	system := prompt.System(p.cfg.Scenarios.Main, sc.Body)
	// What a grounded reply may state: the instructions and the trusted
	// facts (the look-ups' results count as function results); the
	// customer's fields back only what the reply quotes as theirs. The
	// session reads the message's own texts itself.
	session.SetOptions(dispatcher.Options{Draft: r.draft, DryRun: p.cfg.DryRun, Sources: []string{system, prompt.Trusted(e.facts)},
		CustomerTexts: []string{prompt.Written(e.facts)}, Language: e.facts.Language, Received: e.in.Received, Complaint: out.Complaint})
	session.SetTicket(out.TicketID)
	session.SetAttachmentsSeen(len(e.inline))
	var earlier []*genai.Content
	var answered []string
	if e.opened != nil {
		// The first turn chose sc: its look-ups are answered under sc, and
		// the loop goes on from it with sc's instructions and declarations.
		earlier = answerOpening(ctx, session, sc, e.opened)
	}
	if earlier == nil {
		// The rules chose sc, or the first turn chose it and called
		// nothing else: sc's prefetched look-ups run before its first
		// turn. A first turn that called look-ups asked for them itself.
		answered = prefetch(ctx, session, &e.facts)
	}
	r.res, r.err = p.cfg.Agent.Run(ctx, agent.Request{
		System:        system,
		Prompt:        prompt.User(e.facts, e.text, e.quoted),
		Parts:         e.inline,
		Functions:     declarations(sc),
		FinalFunction: p.cfg.Dispatcher.Tools().FinalOf(sc),
		Earlier:       earlier,
		Answered:      answered,
	}, session)
	out.FunctionCalls = session.Records()
	out.TicketID = session.Ticket()
	r.verdict = session.Verdict()
	e.verdict = r.verdict
	out.Decision, out.Commitments, out.Verification = r.verdict.Decision, r.verdict.Commitments, r.verdict.Verification
	if r.verdict.SerialFromAttachment {
		out.SerialSource = SerialSourceAttachment
	}
	out.ModelCalls += r.res.ModelCalls
	out.Tokens.Add(r.res.Usage)
	p.verify(ctx, sc, out, r, e.in.MoreAttempts)
	if r.verdict.NoticeRefused != nil && !r.verdict.Notified {
		// Staff were not told: never a silent wait. The outcome says so
		// first, wherever it is read.
		out.NoticeSuppressed = true
		if out.Status == triage.StatusFailed {
			out.Detail = clip.Bytes(NoticeSuppressedMark+out.Detail, triage.MaxDetail, "…")
		}
	}
}

// NoticeSuppressedMark starts the detail of an email whose staff notice a
// notice bound refused (Outcome.NoticeSuppressed).
const NoticeSuppressedMark = "notice suppressed: "

// ran is what the agent run of answer leaves to verify.
type ran struct {
	verdict dispatcher.Verdict // what the calls came to
	res     agent.Result
	err     error // the agent run's
	draft   bool  // the reply is left as a draft
}

// verify tells from the calls what became of the reply: only a successful
// final call (send_email) makes an email handled. A reply the mail server
// refused is send_failed even when the model then failed too: the refusal
// is what a person must know. A handled escalation hands the conversation
// to a person.
func (p *Processor) verify(ctx context.Context, sc *instructions.Scenario, out *Outcome, r ran, moreAttempts bool) {
	v := r.verdict
	if v.Refused != nil {
		// The reply cannot go out for this message: the sender refused it at
		// a reply limit (exact, at send time), or it exists already for
		// another message with this Key.
		out.fail(v.Refused.Reason, v.Refused.Message)
		return
	}
	if f := v.SendFailure; !v.Sent && f != nil {
		p.sendFailed(ctx, out, f, moreAttempts)
		return
	}
	if r.err != nil {
		out.fail(triage.ReasonEmailNotSent, r.err.Error())
		return
	}
	if !v.Sent {
		out.fail(notSent(r))
		return
	}
	out.Status = triage.StatusReplied
	rc := *v.Reply
	out.Reply = &rc
	if v.DryRun { // nothing went anywhere: the reply that would have gone out
		if r.draft {
			out.Status = triage.StatusDrafted
		}
		// Staff would have their notice and a person the conversation
		// (the takeover itself is an effect: not done).
		out.Escalated = sc.Escalate && p.cfg.Tickets != nil && v.Notified
		return
	}
	if rc.Drafted {
		out.Status = triage.StatusDrafted
	}
	p.recordReply(ctx, out.TicketID, out.Reply, p.cfg.Now())
	if sc.Escalate && v.Notified && out.TicketID != "" {
		// The customer has their acknowledgement and staff their notice:
		// from now on a person owns the conversation.
		if err := p.cfg.Tickets.Takeover(context.WithoutCancel(ctx), out.TicketID, OwnerEscalated); err != nil {
			out.Detail = "escalated, but the takeover was not recorded: " + err.Error()
			p.cfg.Logger.ErrorContext(ctx, "escalation takeover failed", "ticket", out.TicketID, "err", err)
		} else {
			out.Escalated = true
		}
	}
}

// notSent is the reason and detail of a run that ended without a
// successful final call.
func notSent(r ran) (triage.Reason, string) {
	v := r.verdict
	detail := "the model ended without a successful " + v.Final
	if r.res.Stop != nil {
		detail = r.res.Stop.Error()
	}
	if n := v.Blocked; n > 0 {
		detail += fmt.Sprintf(" (%d call(s) refused by the dispatcher)", n)
	}
	if r.res.RefusedCalls > 0 {
		detail += fmt.Sprintf(" (%d call(s) over the per-turn cap refused unrun)", r.res.RefusedCalls)
	}
	if e := v.FinalError; e != nil && e.Code == dispatcher.CodeUngroundedClaim {
		return triage.ReasonUngroundedClaim, e.Message
	}
	if e := v.FinalError; e != nil && dispatcher.Overpromised(e.Code) {
		return triage.ReasonCommitmentNotAllowed, e.Message
	}
	if n := v.NoticeRefused; n != nil {
		return n.Reason, n.Message
	}
	return triage.ReasonEmailNotSent, detail
}

// detect chooses the scenario. A follow-up is answered by the follow-up
// scenario unless it escalates: the customer's third message on the
// conversation, or the escalation scenario's rules match its text. A new
// email is the rules' when they are sure; else the model chooses in the
// email's first turn (open), or, with no model, the fallback scenario.
func (p *Processor) detect(ctx context.Context, e *email) DetectResult {
	facts, text, conv, why, earlier := e.facts, e.text, e.conv, e.convWhy, e.earlier
	if conv != nil {
		if esc := p.cfg.Scenarios.Flagged(isEscalation); esc != nil {
			if earlier == EscalateAfter {
				return DetectResult{Scenario: esc, Method: MethodRules,
					Reason: fmt.Sprintf("%s: message %d from the customer on %s", esc.Name, earlier+1, conv.TicketID)}
			}
			if r, ok := p.cfg.Detector.Rule(esc.Name, facts, text); ok {
				return DetectResult{Scenario: esc, Method: MethodRules, Reason: esc.Name + ": " + r + " (follow-up of " + conv.TicketID + ")"}
			}
		}
		if fu := p.cfg.Scenarios.Flagged(isFollowUp); fu != nil {
			return DetectResult{Scenario: fu, Method: MethodRules, Reason: fu.Name + ": " + why}
		}
	}
	res, unsure, decided := p.cfg.Detector.Detect(facts, text)
	if decided {
		return res
	}
	return p.open(ctx, e, unsure)
}

// declarations turns a scenario's functions into Gemini declarations. They are
// built per email: the SDK may touch what it is given.
func declarations(sc *instructions.Scenario) []*genai.FunctionDeclaration {
	decls := make([]*genai.FunctionDeclaration, 0, len(sc.Functions))
	for _, f := range sc.Functions {
		decls = append(decls, &genai.FunctionDeclaration{
			Name:                 f.Name,
			Description:          f.Description,
			ParametersJsonSchema: f.Parameters,
		})
	}
	return decls
}
