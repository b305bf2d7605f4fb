package eval

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage/internal/dispatcher"
)

func TestMockRoutes(t *testing.T) {
	set := testSet(t)
	dir := t.TempDir()
	p := writeCase(t, dir, "mocks.yaml", `scenario_id: mocks_001
input:
  email: {subject: s, body: "SN1", from: a@example.com}
  mock_function_responses:
    check_warranty:
      status: valid
      years: 2
    create_ticket:
      - {ticket_id: TKT-1}
      - error: {code: unavailable, message: down}
      - {ticket_id: TKT-3}
expected_output:
  status: replied
`)
	cases, err := Load([]string{p}, set)
	if err != nil {
		t.Fatal(err)
	}
	routes := MockRoutes(cases[0], []string{"check_warranty", "create_ticket", "send_email", "lookup_order"})

	type result struct {
		Res  map[string]any
		Code string
		Msg  string
	}
	call := func(name string) result {
		res, err := routes[name](context.Background(), &dispatcher.Call{Name: name})
		var de *dispatcher.Error
		switch {
		case err == nil:
			return result{Res: res.Value}
		case errors.As(err, &de):
			return result{Code: string(de.Code), Msg: de.Message}
		}
		t.Fatalf("%s: error %v is not a *dispatcher.Error", name, err)
		return result{}
	}
	var got []result
	for i := 0; i < 2; i++ {
		got = append(got, call("check_warranty"))
	}
	got[0].Res["status"] = "mutated by the caller" // must not leak into the next call
	got[1] = call("check_warranty")
	for i := 0; i < 5; i++ {
		got = append(got, call("create_ticket"))
	}
	got = append(got, call("send_email"), call("send_email"), call("lookup_order"))

	want := []result{
		{Res: map[string]any{"status": "mutated by the caller", "years": float64(2)}},
		{Res: map[string]any{"status": "valid", "years": float64(2)}},
		{Res: map[string]any{"ticket_id": "TKT-1"}},
		{Code: "unavailable", Msg: "down"},
		{Res: map[string]any{"ticket_id": "TKT-3"}},
		{Res: map[string]any{"ticket_id": "TKT-3"}}, // the last repeats
		{Res: map[string]any{"ticket_id": "TKT-3"}},
		{Res: map[string]any{"message_id": "<sent-1.mocks_001@eval.triage.invalid>", "status": "sent"}},
		{Res: map[string]any{"message_id": "<sent-2.mocks_001@eval.triage.invalid>", "status": "sent"}},
		{Code: string(CodeNoMock), Msg: "eval case mocks_001 gives no mock response for lookup_order"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mock responses (-want +got):\n%s", diff)
	}

	// Fresh routes start the sequences again.
	again := MockRoutes(cases[0], []string{"create_ticket"})
	res, err := again["create_ticket"](context.Background(), &dispatcher.Call{})
	if err != nil || res.Value["ticket_id"] != "TKT-1" {
		t.Errorf("fresh routes: %v, %v; want TKT-1", res, err)
	}
}

func TestMockDefaults(t *testing.T) {
	c := &Case{ID: "d"}
	routes := MockRoutes(c, []string{"check_warranty", "create_ticket"})
	_, err := routes["check_warranty"](context.Background(), &dispatcher.Call{})
	var de *dispatcher.Error
	if !errors.As(err, &de) || de.Code != CodeNoMock || !strings.Contains(de.Message, "check_warranty") {
		t.Errorf("check_warranty without mock: %v, want code %s", err, CodeNoMock)
	}
	res, err := routes["create_ticket"](context.Background(), &dispatcher.Call{})
	if err != nil || res.Value["ticket_id"] != "TKT-EVAL-1" || res.Value["status"] != "created" {
		t.Errorf("create_ticket default = %v, %v", res, err)
	}
}

// A function with a real backend (an http or mcp binding) runs for real
// when the case gives it no mock; a mock still wins; builtins stay mocked.
func TestRoutesForUsesBackendsWithoutMock(t *testing.T) {
	dir := t.TempDir()
	p := writeCase(t, dir, "be.yaml", `scenario_id: backends_001
input:
  email: {subject: s, body: "SN1", from: a@example.com}
  mock_function_responses:
    check_warranty: {status: valid}
expected_output:
  status: replied
`)
	cases, err := Load([]string{p}, testSet(t))
	if err != nil {
		t.Fatal(err)
	}
	real := func(name string) dispatcher.Func {
		return dispatcher.Untyped(func(context.Context, *dispatcher.Call) (map[string]any, error) {
			return map[string]any{"real": name}, nil
		})
	}
	r := &Runner{
		cfg:    Config{Backends: map[string]dispatcher.Func{"lookup_order": real("lookup_order"), "check_warranty": real("check_warranty"), "unbound": real("unbound")}},
		routes: []string{"check_warranty", "create_ticket", "send_email", "lookup_order"},
	}
	routes := r.routesFor(cases[0], r.cfg.Policy)
	got := map[string]any{}
	for _, name := range []string{"lookup_order", "check_warranty"} {
		res, err := routes[name](context.Background(), &dispatcher.Call{Name: name})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got[name] = res.Value
	}
	want := map[string]any{
		"lookup_order":   map[string]any{"real": "lookup_order"}, // no mock: the backend
		"check_warranty": map[string]any{"status": "valid"},      // mocked: the mock
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, ok := routes["unbound"]; ok {
		t.Error("a backend without a binding became a route")
	}
}
