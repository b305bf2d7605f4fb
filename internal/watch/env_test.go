package watch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/mail"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"triage"
	tmail "triage/internal/clients/mail"
	"triage/internal/ledger"
	"triage/internal/message"
	"triage/internal/processor"
	"triage/internal/replies"
	"triage/internal/testkit/mailtest"
)

// fakeProc stands in for the pipeline: it replies through the real mail
// sender the way the dispatcher does (Key, deterministic Message-ID,
// threading, to the Reply-To or From the real parser finds), skips subjects
// containing "auto" (and those containing "junkmail" as spam), fails subjects containing "fail", blocks until
// cancelled on "hang", and mails ADDR instead on a subject "to:ADDR". A
// subject containing "complaint" is a complaint; "ticket:T" puts it in
// ticket T. A
// subject containing "escalate" is escalated as notify_staff does it: a
// staff notice to fakeStaff first (the reply only when it went), and the
// outcome says Escalated.
type fakeProc struct {
	sender tmail.Sender
	draft  bool // reply mode draft: the reply is a draft (Reply.Draft)

	// gate, when > 0, holds calls until gate calls have been in flight at
	// once (or a few seconds pass), so a test sees the concurrency.
	gate int
	// delay is how long each call takes at least.
	delay time.Duration

	mu          sync.Mutex
	calls       []string // keys
	hung        chan struct{}
	inFlight    int
	maxInFlight int
	moved       chan struct{} // closed and replaced whenever inFlight grows
}

// MaxInFlight is the most calls that were running at once.
func (p *fakeProc) MaxInFlight() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.maxInFlight
}

// enter counts a call in and, with a gate, waits for the others.
func (p *fakeProc) enter() {
	p.mu.Lock()
	p.inFlight++
	p.maxInFlight = max(p.maxInFlight, p.inFlight)
	if p.moved != nil {
		close(p.moved)
	}
	p.moved = make(chan struct{})
	p.mu.Unlock()
	if p.gate <= 0 {
		return
	}
	timeout := time.After(3 * time.Second)
	for {
		p.mu.Lock()
		n, moved := p.maxInFlight, p.moved
		p.mu.Unlock()
		if n >= p.gate {
			return
		}
		select {
		case <-moved:
		case <-timeout:
			return
		}
	}
}

func (p *fakeProc) Process(ctx context.Context, in processor.Input) processor.Outcome {
	p.mu.Lock()
	p.calls = append(p.calls, string(in.Key))
	p.mu.Unlock()
	p.enter()
	time.Sleep(p.delay)
	defer func() {
		p.mu.Lock()
		p.inFlight--
		p.mu.Unlock()
	}()
	msg, err := mail.ReadMessage(bytes.NewReader(in.Raw))
	if err != nil {
		return processor.Outcome{File: in.Name, Status: triage.StatusFailed, Reason: triage.ReasonParseError}
	}
	subject := msg.Header.Get("Subject")
	parsed, err := message.Parse(in.Raw)
	if err != nil {
		return processor.Outcome{File: in.Name, Status: triage.StatusFailed, Reason: triage.ReasonParseError}
	}
	to := parsed.ReplyTo
	if _, addr, ok := strings.Cut(subject, "to:"); ok {
		to = addr
	}
	out := processor.Outcome{File: in.Name, MessageID: msg.Header.Get("Message-Id"), Subject: subject, Scenario: "fake",
		Complaint: strings.Contains(subject, "complaint")}
	if _, rest, ok := strings.Cut(subject, "ticket:"); ok {
		out.TicketID, _, _ = strings.Cut(rest, " ")
	}
	switch {
	case strings.Contains(subject, "junkmail"):
		out.Status, out.Reason = triage.StatusSkipped, triage.ReasonSpam
		return out
	case strings.Contains(subject, "auto"):
		out.Status, out.Reason = triage.StatusSkipped, "auto_submitted"
		return out
	case strings.Contains(subject, "fail"):
		out.Status, out.Reason = triage.StatusFailed, triage.ReasonNoScenario
		return out
	case strings.Contains(subject, "panic"):
		panic("fake pipeline: " + subject)
	case strings.Contains(subject, "hang"):
		if p.hung != nil {
			p.hung <- struct{}{}
		}
		<-ctx.Done()
		out.Status, out.Reason = triage.StatusFailed, triage.ReasonCanceled
		return out
	}
	escalate := strings.Contains(subject, "escalate")
	if escalate {
		key := in.Key + triage.Key("|staff|"+fakeStaff)
		n := &tmail.Reply{From: "Support <support@example.com>", To: fakeStaff, Subject: "[triage escalation] " + subject,
			Body: "Escalated.\n", Key: key, MessageID: tmail.MessageIDFor(key, "example.com"), Notice: true, InboundFrom: parsed.From.Address}
		if _, err := p.sender.Send(ctx, n); err != nil {
			out.Status, out.Reason, out.Detail = triage.StatusFailed, triage.ReasonEmailNotSent, err.Error()
			var limit triage.Limited
			if errors.As(err, &limit) { // as the pipeline reports a notice refused at its bound
				out.Reason = limit.LimitReason()
			}
			return out
		}
	}
	r := &tmail.Reply{
		From:        "Support <support@example.com>",
		To:          to,
		Subject:     "Re: " + subject,
		Body:        "Dziękujemy.\n",
		InReplyTo:   out.MessageID,
		Key:         in.Key,
		Draft:       p.draft,
		MessageID:   tmail.MessageIDFor(in.Key, "example.com"),
		InboundFrom: strings.ToLower(parsed.From.Address),
	}
	if out.MessageID != "" {
		r.References = []string{out.MessageID}
	}
	rc, err := p.sender.Send(ctx, r)
	var limit triage.Limited
	if errors.As(err, &limit) { // as the pipeline reports a refusal over a limit
		out.Status, out.Reason, out.Detail = triage.StatusFailed, limit.LimitReason(), err.Error()
		return out
	}
	if err != nil {
		out.Status, out.Reason, out.Detail = triage.StatusFailed, triage.ReasonEmailNotSent, err.Error()
		return out
	}
	out.Status, out.Escalated = triage.StatusReplied, escalate
	if rc.Drafted {
		out.Status = triage.StatusDrafted
	}
	out.Reply = &triage.Receipt{To: r.To, Subject: r.Subject, MessageID: rc.MessageID}
	return out
}

// fakeStaff is where fakeProc's staff notices go.
const fakeStaff = "staff@example.com"

func (p *fakeProc) Calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.calls)
}

// env is one scenario's world: an IMAP target, an SMTP sink, a ledger and
// the fake pipeline, whose LedgerSender enforces the limits the watcher is
// given (limit).
type env struct {
	t      testing.TB
	tgt    mailtest.Target
	sink   *mailtest.SMTPSink
	ledger *ledger.Ledger
	proc   *fakeProc
	smtp   tmail.Sender
	limits Limits
	bounds triage.NoticeLimits // of staff notices
	now    time.Time
}

func newEnv(t testing.TB, tgt mailtest.Target) *env {
	t.Helper()
	return newEnvAt(t, tgt, filepath.Join(t.TempDir(), "ledger.db"))
}

// newEnvAt is newEnv with the ledger in the SQLite file at path.
func newEnvAt(t testing.TB, tgt mailtest.Target, path string) *env {
	t.Helper()
	e := &env{t: t, tgt: tgt, sink: mailtest.StartSMTPSink(t, mailtest.SMTPOptions{User: "relay", Password: "relaypw"}),
		now: time.Now()}
	l, err := ledger.Open(context.Background(), ledger.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	e.ledger = l
	smtpSender, err := tmail.NewSMTP(tmail.SMTPConfig{Addr: e.sink.Addr, TLS: tmail.TLSNone, Username: "relay", Password: "relaypw"})
	if err != nil {
		t.Fatal(err)
	}
	e.smtp = smtpSender
	e.proc = &fakeProc{sender: e.sender(smtpSender)}
	return e
}

// sender is the LedgerSender over next, with the env's limits.
func (e *env) sender(next tmail.Sender) *replies.LedgerSender {
	e.t.Helper()
	s, err := replies.NewLedgerSender(replies.LedgerSenderConfig{Replies: e.ledger.Replies(), Next: next, Domain: "example.com", Limits: e.limits.Replies(), Notices: e.bounds,
		Inbox: e.inbox()})
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// inbox is the inbox the env's watcher reads.
func (e *env) inbox() triage.Inbox {
	return triage.Inbox{Account: AccountOf(e.tgt.User, e.tgt.Addr), Mailbox: DefaultMailbox}
}

// limit gives the watcher and its LedgerSender these reply limits, as
// triage watch does.
func (e *env) limit(l Limits) {
	e.limits = l
	e.proc.sender = e.sender(e.smtp)
}

func (e *env) config(mod func(*Config)) Config {
	cfg := Config{
		Addr: e.tgt.Addr, TLS: TLSNone, Username: e.tgt.User, Password: e.tgt.Password,
		Processor: e.proc, Ledger: e.ledger,
		BackoffMin: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond,
		IdleRefresh: time.Hour, Interval: time.Hour,
		Limits: e.limits,
		Logger: testLogger(e.t),
	}
	if mod != nil {
		mod(&cfg)
	}
	return cfg
}

// watcher is a Watcher on the env; the Sent and Drafts folders it is
// configured with exist on the server (as a person who names them has
// them).
func (e *env) watcher(mod func(*Config)) *Watcher {
	e.t.Helper()
	cfg := e.config(mod)
	for _, f := range []string{cfg.SentFolder, cfg.DraftsFolder} {
		if f != "" {
			e.tgt.CreateFolder(e.t, f)
		}
	}
	w, err := New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	return w
}

func (e *env) runOnce(mod func(*Config)) *Watcher {
	e.t.Helper()
	w := e.watcher(mod)
	if err := w.RunOnce(context.Background()); err != nil {
		e.t.Fatalf("RunOnce: %v", err)
	}
	return w
}

// repliesTo counts sink messages per In-Reply-To.
func (e *env) repliesTo() map[string]int { return e.sink.CountByHeader("In-Reply-To") }

// deliver appends a customer message to INBOX and returns its Message-ID.
func (e *env) deliver(n int, from, subject string) string {
	e.t.Helper()
	return e.deliverHeader(n, "From: Klient <"+from+">", subject)
}

// deliverHeader is deliver with the From line (and any more header lines)
// given whole.
func (e *env) deliverHeader(n int, header, subject string) string {
	e.t.Helper()
	id := fmt.Sprintf("<m%d.%d@customer.example>", n, e.now.UnixNano())
	raw := fmt.Sprintf("%s\r\nTo: support@example.com\r\nSubject: %s\r\nMessage-ID: %s\r\nDate: %s\r\n\r\nMój numer seryjny SN-%04d.\r\n",
		header, subject, id, e.now.Format(time.RFC1123Z), n)
	e.tgt.Append(e.t, "INBOX", []byte(raw))
	return id
}

// mailbox reads a folder of the target.
func (e *env) mailbox(name string) []mailtest.Message {
	e.t.Helper()
	return mailtest.ReadMailbox(e.t, e.tgt.Client(e.t), name)
}

// headerOf is the first header field name of a raw message ("" when absent).
func headerOf(raw []byte, name string) string {
	for _, line := range strings.Split(string(raw), "\r\n") {
		if line == "" {
			break
		}
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, name) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
