// The calls of one model turn: look-ups declared parallel run at once,
// any other turn one call after the other.

package dispatcher

import (
	"context"
	"sync"

	"triage/internal/agent"
)

// CallTurn runs the calls of one model turn and returns their responses in
// call order (agent.TurnTools). When there are several and every one is to
// a tool declared parallel: true (read-only look-ups), they are admitted
// and checked in order, run at once, and recorded in order: the per-turn
// and per-email caps and max_calls count them as if they ran one after
// the other. A turn with any other call (an effect, the reply, a tool not
// declared parallel, an unknown function) runs its calls one at a time, in
// order, each through its own policies after the one before has been
// recorded: a requirement must be met in an earlier turn, an effect runs
// once per email, and the reply is checked whatever shared its turn.
func (s *Session) CallTurn(ctx context.Context, calls []agent.ToolCall) []agent.Response {
	out := make([]agent.Response, len(calls))
	if !s.parallelTurn(calls) {
		for i, c := range calls {
			out[i] = s.Call(ctx, c.Name, c.Args)
		}
		return out
	}
	s.mu.Lock()
	ps := make([]*pending, len(calls))
	for i, c := range calls {
		ps[i] = s.begin(ctx, c.Name, c.Args)
	}
	s.mu.Unlock()
	// At most the per-turn cap run: begin refused the rest.
	var wg sync.WaitGroup
	for _, p := range ps {
		if p.call != nil {
			wg.Go(func() { p.exec(s) })
		}
	}
	wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, p := range ps {
		out[i] = s.end(p)
	}
	return out
}

// parallelTurn reports whether calls are several, all to tools declared
// parallel.
func (s *Session) parallelTurn(calls []agent.ToolCall) bool {
	if len(calls) < 2 {
		return false
	}
	for _, c := range calls {
		if t := s.d.tools.Get(c.Name); t == nil || !t.Parallel {
			return false
		}
	}
	return true
}

// CallOpening runs the calls of the turn that chose the email's scenario
// (the pipeline's opening turn, whose model had the candidates'
// descriptions but not the chosen scenario's instructions) as CallTurn
// does, except that a call to an effect or final tool is refused unrun
// (not_in_opening_turn): nothing changes and nothing is sent before the
// scenario's instructions were read. The caller starts the turn
// (StartTurn) first, as for any turn.
func (s *Session) CallOpening(ctx context.Context, calls []agent.ToolCall) []agent.Response {
	s.mu.Lock()
	s.opening = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.opening = false
		s.mu.Unlock()
	}()
	return s.CallTurn(ctx, calls)
}
