package dispatcher

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"triage/internal/agent"
	"triage/internal/testkit/toolstest"
)

const turnTools = `
tools:
  check_warranty: {builtin: check_warranty, parallel: true}
  create_ticket: {builtin: create_ticket, effect: true}
  send_email: {builtin: send_email, effect: true, final: true}
  lookup:
    mcp: {url: 'http://127.0.0.1:9/mcp'}
    parallel: true
    max_calls: 1
    args: {q: {max_length: 50}}
`

// turnSession is a session over turnTools whose routes answer with the
// argument they got; hold, when set, runs inside every route.
func turnSession(t *testing.T, perTurn int, hold func(ctx context.Context, name string) error) (*Session, *[]string) {
	t.Helper()
	var mu sync.Mutex
	var ran []string
	route := Untyped(func(ctx context.Context, c *Call) (map[string]any, error) {
		mu.Lock()
		ran = append(ran, c.Name)
		mu.Unlock()
		if hold != nil {
			if err := hold(ctx, c.Name); err != nil {
				return nil, err
			}
		}
		return map[string]any{"got": fmt.Sprint(c.Args["serial_number"], c.Args["q"])}, nil
	})
	routes := map[string]Func{}
	for _, n := range []string{FuncCheckWarranty, FuncCreateTicket, FuncSendEmail, "lookup"} {
		routes[n] = route
	}
	d, err := New(Config{Tools: parseTools(t, turnTools), Routes: routes, MaxCallsPerTurn: perTurn})
	if err != nil {
		t.Fatal(err)
	}
	sc := toolstest.Scenario(t, false, toolstest.Function(t, "lookup", obj([]any{"q"}, map[string]any{"q": str})))
	s := d.Session(testMessage(), sc, "k")
	s.StartTurn()
	return s, &ran
}

// barrier lets n calls through once all n are running at the same time;
// a call that waits long for the others reports it ran alone.
func barrier(n int) func(ctx context.Context, name string) error {
	var mu sync.Mutex
	all := make(chan struct{})
	return func(ctx context.Context, name string) error {
		mu.Lock()
		if n--; n == 0 {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
			return nil
		case <-time.After(10 * time.Second):
			return fmt.Errorf("%s ran without the other calls of its turn", name)
		}
	}
}

func codes(resps []agent.Response) []string {
	var out []string
	for _, r := range resps {
		switch {
		case r.OK:
			out = append(out, fmt.Sprint("ok ", r.Result["got"]))
		case r.Err != nil:
			out = append(out, string(r.Err.Code))
		}
	}
	return out
}

// A turn of look-ups declared parallel runs them at once (each route waits
// until all three are running) and answers and records them in call order.
func TestParallelTurnRunsLookupsAtOnce(t *testing.T) {
	s, ran := turnSession(t, 0, barrier(3))
	resps := s.CallTurn(context.Background(), []agent.ToolCall{
		{Name: FuncCheckWarranty, Args: map[string]any{"serial_number": "SN-1"}},
		{Name: FuncCheckWarranty, Args: map[string]any{"serial_number": "SN-2"}},
		{Name: "lookup", Args: map[string]any{"q": "grzałka"}},
	})
	if diff := cmp.Diff([]string{"ok SN-1<nil>", "ok SN-2<nil>", "ok <nil>grzałka"}, codes(resps)); diff != "" {
		t.Errorf("responses (-want +got):\n%s", diff)
	}
	var recs []string
	for _, r := range s.Records() {
		recs = append(recs, fmt.Sprint(r.Name, " ", r.OK, " ", r.Result["got"]))
	}
	want := []string{"check_warranty true SN-1<nil>", "check_warranty true SN-2<nil>", "lookup true <nil>grzałka"}
	if diff := cmp.Diff(want, recs); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if len(*ran) != 3 {
		t.Errorf("ran %v", *ran)
	}
}

// A turn with a call that is not parallel (an effect) runs its calls one
// after the other, in order: no two routes ever run at once.
func TestMixedTurnRunsOneCallAtATime(t *testing.T) {
	var mu sync.Mutex
	inFlight, most := 0, 0
	hold := func(ctx context.Context, name string) error {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		time.Sleep(time.Millisecond) // room for an overlap, were there one
		mu.Lock()
		inFlight--
		mu.Unlock()
		return nil
	}
	s, ran := turnSession(t, 0, hold)
	resps := s.CallTurn(context.Background(), []agent.ToolCall{
		{Name: FuncCheckWarranty, Args: map[string]any{"serial_number": "SN-1"}},
		{Name: "lookup", Args: map[string]any{"q": "grzałka"}},
		{Name: FuncCreateTicket, Args: map[string]any{"serial_number": "SN-1", "customer_email": "jan@example.com", "priority": "normal"}},
		{Name: FuncCheckWarranty, Args: map[string]any{"serial_number": "SN-2"}},
	})
	if diff := cmp.Diff([]string{"ok SN-1<nil>", "ok <nil>grzałka", "ok SN-1<nil>", "ok SN-2<nil>"}, codes(resps)); diff != "" {
		t.Errorf("responses (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{FuncCheckWarranty, "lookup", FuncCreateTicket, FuncCheckWarranty}, *ran); diff != "" {
		t.Errorf("routes ran (-want +got):\n%s", diff)
	}
	if most != 1 {
		t.Errorf("%d calls ran at once in a turn with an effect", most)
	}
}

// The caps count a parallel turn's calls as if they ran one after the
// other: max_calls counts the calls already admitted in the turn, the
// per-turn cap the calls asked before; the same turn asked call by call
// gets the same answers.
func TestParallelTurnKeepsTheCaps(t *testing.T) {
	calls := []agent.ToolCall{
		{Name: "lookup", Args: map[string]any{"q": "a"}},
		{Name: "lookup", Args: map[string]any{"q": "b"}},
		{Name: FuncCheckWarranty, Args: map[string]any{"serial_number": "SN-1"}},
		{Name: FuncCheckWarranty, Args: map[string]any{"serial_number": "SN-2"}},
	}
	want := []string{"ok <nil>a", string(CodeMaxCalls), "ok SN-1<nil>", string(CodeTooManyCalls)}

	s, ran := turnSession(t, 3, nil)
	if diff := cmp.Diff(want, codes(s.CallTurn(context.Background(), calls))); diff != "" {
		t.Errorf("one turn at once (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{FuncCheckWarranty, "lookup"}, *ran, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("routes ran, in any order (-want +got):\n%s", diff)
	}

	seq, _ := turnSession(t, 3, nil)
	var got []agent.Response
	for _, c := range calls {
		got = append(got, seq.Call(context.Background(), c.Name, c.Args))
	}
	if diff := cmp.Diff(want, codes(got)); diff != "" {
		t.Errorf("call by call (-want +got):\n%s", diff)
	}
	// The next turn's look-up is over max_calls, the earlier one recorded.
	s.StartTurn()
	if got := codes(s.CallTurn(context.Background(), calls[:2])); !cmp.Equal(got, []string{string(CodeMaxCalls), string(CodeMaxCalls)}) {
		t.Errorf("next turn: %v", got)
	}
}

var _ agent.TurnTools = (*Session)(nil)
