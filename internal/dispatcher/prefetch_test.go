package dispatcher

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage/internal/agent"
	"triage/internal/decision"
	"triage/internal/instructions"
	"triage/internal/message"
	"triage/internal/testkit/toolstest"
)

// prefetchMessage names four serials in its text.
func prefetchMessage(text string) *message.Message {
	m := testMessage()
	m.Subject, m.Text, m.Quoted = "Reklamacja", text, ""
	return m
}

// prefetchDispatcher is the shipped tools (check_warranty prefetch: true)
// over routes whose check_warranty reaches decided.
func prefetchDispatcher(t *testing.T, f *fakeRoutes, decided *decision.Decision, ts *instructions.Tools) *Dispatcher {
	t.Helper()
	routes := f.routes(FuncCheckWarranty, FuncCreateTicket, FuncSendEmail, FuncNotifyStaff)
	untyped := routes[FuncCheckWarranty]
	routes[FuncCheckWarranty] = func(ctx context.Context, c *Call) (Result, error) {
		r, err := untyped(ctx, c)
		r.Decision = decided
		return r, err
	}
	d, err := New(Config{Tools: ts, Routes: routes})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestPrefetch: the look-up runs through the policies once per serial of
// the message, the first MaxPrefetchSerials in the message's order, marked
// prefetched; each counts for requires as answered in an earlier turn (a
// ticket for it is allowed in the first model turn, one for a serial not
// looked up is not), and its decision is the email's.
func TestPrefetch(t *testing.T) {
	f := &fakeRoutes{}
	guarantee := &decision.Decision{Basis: decision.Guarantee}
	d := prefetchDispatcher(t, f, guarantee, toolstest.Shipped(t))
	s := d.Session(prefetchMessage("Mam cztery ekspresy: SN-10001-PL, SN-10002-PL, SN-10003-PL i SN-10004-PL."), testScenario(t, false), "k")
	got := s.Prefetch(context.Background())
	var serials []any
	for _, p := range got {
		if p.Name != FuncCheckWarranty || !p.Response.OK {
			t.Errorf("prefetched %s: %+v", p.Name, p.Response)
		}
		serials = append(serials, p.Args["serial_number"])
	}
	if diff := cmp.Diff([]any{"SN-10001-PL", "SN-10002-PL", "SN-10003-PL"}, serials); diff != "" {
		t.Errorf("prefetched serials (-want +got):\n%s", diff)
	}
	recs := s.Records()
	if len(recs) != MaxPrefetchSerials || len(f.calls) != MaxPrefetchSerials {
		t.Fatalf("%d records, %d routed; want %d", len(recs), len(f.calls), MaxPrefetchSerials)
	}
	for _, r := range recs {
		if !r.Prefetched || !r.OK {
			t.Errorf("record %+v: want prefetched and ok", r)
		}
	}
	if s.decided() != guarantee || s.Verdict().Decision != guarantee {
		t.Errorf("decided %+v, want the prefetched check's", s.decided())
	}

	s.StartTurn() // the model's first turn
	ticket := func(sn string) agent.Response {
		return s.Call(context.Background(), FuncCreateTicket, map[string]any{"serial_number": sn, "customer_email": "jan@example.com", "priority": "normal"})
	}
	if r := ticket("SN-10004-PL"); r.OK || r.Err.Code != CodeRequirementNotMet {
		t.Errorf("ticket for a serial not looked up: %+v, want requirement_not_met", r)
	}
	if r := ticket("sn-10002-pl"); !r.OK {
		t.Errorf("ticket for a prefetched serial in the first turn: %+v", r.Err)
	}
	// The model may still check a serial itself.
	if r := s.Call(context.Background(), FuncCheckWarranty, map[string]any{"serial_number": "SN-10004-PL"}); !r.OK {
		t.Errorf("the model's own check: %+v", r.Err)
	}
	if recs := s.Records(); recs[len(recs)-1].Prefetched {
		t.Error("the model's own check is marked prefetched")
	}
}

// TestPrefetchNothing: no look-up runs without a serial in the message,
// in a scenario that does not declare the look-up, or when the binding
// does not say prefetch; without it a ticket in the first turn is refused.
func TestPrefetchNothing(t *testing.T) {
	off := toolstest.Shipped(t)
	off.Tools[FuncCheckWarranty].Prefetch = false
	noCheck := testScenario(t, false)
	noCheck.Functions = noCheck.Functions[1:]
	for name, tt := range map[string]struct {
		ts  *instructions.Tools
		sc  *instructions.Scenario
		msg *message.Message
	}{
		"no serial":          {toolstest.Shipped(t), testScenario(t, false), prefetchMessage("Mój ekspres nie działa.")},
		"not declared":       {toolstest.Shipped(t), noCheck, prefetchMessage("Ekspres SN-10001-PL nie działa.")},
		"binding without it": {off, testScenario(t, false), prefetchMessage("Ekspres SN-10001-PL nie działa.")},
	} {
		t.Run(name, func(t *testing.T) {
			f := &fakeRoutes{}
			s := prefetchDispatcher(t, f, nil, tt.ts).Session(tt.msg, tt.sc, "k")
			if got := s.Prefetch(context.Background()); got != nil || len(s.Records()) != 0 || len(f.calls) != 0 {
				t.Fatalf("prefetched %+v, %d records, routed %v", got, len(s.Records()), f.calls)
			}
			if tt.sc.Function(FuncCreateTicket) == nil {
				return
			}
			s.StartTurn()
			r := s.Call(context.Background(), FuncCreateTicket, map[string]any{"serial_number": "SN-10001-PL", "customer_email": "jan@example.com", "priority": "normal"})
			if r.OK {
				t.Error("a ticket without a check was allowed")
			}
		})
	}
}
