package main

import (
	"bytes"
	"strings"
	"testing"

	"triage"
	"triage/eval"
	"triage/internal/agent"
	"triage/internal/clients/tickets"
	"triage/internal/dispatcher"
	"triage/internal/ledger"
	"triage/internal/processor"
	"triage/internal/replies"
)

// hostile is what a stranger can put in any field that reaches the
// operator's terminal: an OSC 52 clipboard write, a screen clear, a carriage
// return that overwrites the line, a C1 CSI and a bidi override.
const hostile = "x\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b[H\rfake\u009b31m\u202eevil"

// Every human-readable output escapes control characters; coloured marks
// (our own escape sequences) are still written.
func TestHumanOutputEscapesControls(t *testing.T) {
	st := &tickets.State{TicketID: "TKT-1", Status: "open", CustomerEmail: hostile, Summary: hostile, Owner: hostile, AgentDisabled: true,
		Messages: []tickets.Message{{MessageID: hostile, Direction: tickets.Inbound, From: hostile, Subject: hostile}},
		Notes:    []tickets.Note{{MessageID: hostile, From: hostile, Text: hostile + "\n" + hostile}}}
	out := processor.Outcome{File: hostile, From: hostile, Subject: hostile, Status: triage.StatusFailed, Reason: "email_not_sent", Detail: hostile,
		Scenario: "s", Detection: processor.Detection{Method: "rules", Reason: hostile}, SerialNumbers: []string{hostile},
		FunctionCalls: []dispatcher.Record{{Name: "check_warranty", Args: map[string]any{"serial_number": hostile}, OK: true, Result: map[string]any{"status": hostile}},
			{Name: "send_email", Args: map[string]any{"subject": hostile}, Blocked: true, Error: &agent.ToolError{Code: "invalid_args", Message: hostile}}}}
	coloured := eval.Glyphs.Coloured()
	outputs := map[string]func(*bytes.Buffer) error{
		"tickets show": func(b *bytes.Buffer) error { return printTicket(b, st, false) },
		"tickets list": func(b *bytes.Buffer) error {
			return printTickets(b, []tickets.Listed{{TicketID: "TKT-1", CustomerEmail: hostile, Summary: hostile, Owner: hostile}}, false)
		},
		"tickets change": func(b *bytes.Buffer) error { return printChange(b, st, false) },
		"ledger": func(b *bytes.Buffer) error {
			return printEntries(b, []ledger.Entry{{Sender: hostile, Subject: hostile, MessageID: hostile, Reason: hostile}}, nil, false)
		},
		"ledger replies": func(b *bytes.Buffer) error {
			return printReplies(b, []replies.Reply{{To: hostile, MessageID: hostile, Key: hostile}}, false)
		},
		"process": func(b *bytes.Buffer) error { printSummary(b, out, eval.ASCII); return nil },
		"process tty": func(b *bytes.Buffer) error {
			printSummary(b, out, coloured)
			s := strings.NewReplacer(coloured.Pass, "", coloured.Fail, "").Replace(b.String())
			if !strings.Contains(b.String(), coloured.Fail) {
				t.Errorf("process tty: the coloured mark is gone")
			}
			b.Reset()
			b.WriteString(s)
			return nil
		},
	}
	for name, f := range outputs {
		var b bytes.Buffer
		if err := f(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := b.String()
		if i := strings.IndexAny(got, "\x1b\x07\r\u009b\u202e"); i >= 0 {
			t.Errorf("%s: a control character reached the terminal at %d: %q", name, i, got[max(0, i-20):min(len(got), i+20)])
		}
		if !strings.Contains(got, `\x1b]52`) {
			t.Errorf("%s: the escaped sequence is not shown: %q", name, got)
		}
	}
}
