// Look-ups run before the first model turn (tools.yaml prefetch: true).

package dispatcher

import (
	"context"
	"maps"
	"slices"

	"triage/internal/agent"
	"triage/internal/instructions"
)

// MaxPrefetchSerials bounds the calls of one prefetched look-up: one per
// serial found in the message, the first MaxPrefetchSerials of them.
const MaxPrefetchSerials = 3

// Prefetched is one look-up the pipeline ran before the first model turn:
// its arguments as the dispatcher vouched for them and its response.
type Prefetched struct {
	Name     string
	Args     map[string]any
	Response agent.Response
}

// Prefetch runs, before the first model turn, every look-up the scenario
// declares whose binding says prefetch: true, with its arguments filled
// from the message: the sender, the reply address, and one call per serial
// found in the message (the first MaxPrefetchSerials; a look-up that takes
// a serial does not run when the message has none). The calls go through
// the same admission, policies, caps, records and trace spans as a model's
// (CallTurn: together, as a turn of look-ups), and their records say
// Prefetched. Their successes count for requires as calls of an earlier
// turn, and their decisions as the email's. Call it after SetOptions and
// before the first StartTurn; the model may still call the look-up itself.
func (s *Session) Prefetch(ctx context.Context) []Prefetched {
	calls := s.prefetchCalls()
	if len(calls) == 0 {
		return nil
	}
	s.mu.Lock()
	first := len(s.records)
	s.mu.Unlock()
	resps := s.CallTurn(ctx, calls)
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Prefetched, len(calls))
	for i, c := range calls {
		rec := &s.records[first+i]
		rec.Prefetched = true
		out[i] = Prefetched{Name: c.Name, Args: cloneArgs(rec.Args), Response: resps[i]}
	}
	return out
}

// prefetchCalls lists the calls Prefetch runs, in the scenario's
// declaration order, then the message's order of serials.
func (s *Session) prefetchCalls() []agent.ToolCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sc == nil || s.msg == nil {
		return nil
	}
	var calls []agent.ToolCall
	for _, fn := range s.sc.Functions {
		t := s.d.tools.Get(fn.Name)
		if t == nil || !t.Prefetch || !t.Parallel || t.Effect || t.Final {
			continue
		}
		calls = append(calls, s.fill(t)...)
	}
	return calls
}

// fill builds the calls of one prefetched look-up: nil when an argument
// has no value to take.
func (s *Session) fill(t *instructions.Tool) []agent.ToolCall {
	args := map[string]any{}
	serialArg := ""
	for _, a := range slices.Sorted(maps.Keys(t.Args)) {
		switch from := t.Args[a].From; {
		case instructions.SerialFrom(from):
			serialArg = a
		case from == instructions.FromSender && s.msg.From.Address != "":
			args[a] = s.msg.From.Address
		case from == instructions.FromReplyTo && s.replyTo != "":
			args[a] = s.replyTo
		default:
			return nil // nothing the pipeline can fill it with
		}
	}
	if serialArg == "" {
		return []agent.ToolCall{{Name: t.Name, Args: args}}
	}
	found := s.index().found
	calls := make([]agent.ToolCall, 0, min(len(found), MaxPrefetchSerials))
	for _, sn := range found[:min(len(found), MaxPrefetchSerials)] {
		a := cloneArgs(args)
		a[serialArg] = sn
		calls = append(calls, agent.ToolCall{Name: t.Name, Args: a})
	}
	return calls
}
