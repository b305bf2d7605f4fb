package processor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"triage"
	"triage/internal/agent"
	"triage/internal/dispatcher"
	"triage/internal/processor"
	"triage/internal/prompt"
	"triage/internal/testkit/geminitest"
)

// The opening turn's scripted calls.
var (
	chooseValid = geminitest.Call("c0", prompt.ChooseScenario, map[string]any{"scenario": "valid-warranty", "reason": "a photo of the plate"})
	checkPhoto  = geminitest.Call("c1", "check_warranty", map[string]any{"serial_number": "SN-48213-PL"})
	openTicket  = geminitest.One(geminitest.Call("c2", "create_ticket", map[string]any{"serial_number": "SN-48213-PL", "customer_email": "anna@customer.example", "priority": "normal"}))
	replyPhoto  = geminitest.One(geminitest.Call("c3", "send_email", map[string]any{"to": "anna@customer.example", "subject": "Re: Reklamacja ekspresu",
		"body": "Dzień dobry,\n\ndziękujemy, sprawdziliśmy gwarancję.\n\nZespół serwisu gwarancyjnego"}))
)

// callsOf lists an outcome's calls as "name ok" or "name code".
func callsOf(o processor.Outcome) []string {
	var out []string
	for _, c := range o.FunctionCalls {
		s := c.Name + " ok"
		if !c.OK {
			s = c.Name + " " + string(c.Error.Code)
		}
		out = append(out, s)
	}
	return out
}

// declNames lists the names a request declares.
func declNames(r geminitest.Request) []string {
	var out []string
	for _, t := range r.Tools {
		for _, d := range t.FunctionDeclarations {
			out = append(out, d.Name)
		}
	}
	return out
}

// systemText is a request's system instruction.
func systemText(r geminitest.Request) string {
	var sb strings.Builder
	if r.SystemInstruction != nil {
		for _, p := range r.SystemInstruction.Parts {
			sb.WriteString(p.Text)
		}
	}
	return sb.String()
}

// TestOpeningChoosesAndLooksUp: an email the rules cannot place (its serial
// is only on a photo) costs three model calls, not four: the first turn,
// offered every candidate scenario and their look-ups, chooses
// valid-warranty and checks the serial read from the photo; the loop goes
// on from it with the scenario's own instructions and declarations, and
// the outcome says how the scenario was chosen.
func TestOpeningChoosesAndLooksUp(t *testing.T) {
	f := geminitest.New(t, geminitest.One(chooseValid, checkPhoto), openTicket, replyPhoto)
	e := newEnv(t, &agent.Gemini{Client: f.Client()})
	out := e.run(t, photoEmail(part{"tabliczka.png", "image/png", png(100)}))
	if out.Status != triage.StatusReplied {
		t.Fatalf("status %s/%s (%s), want replied", out.Status, out.Reason, out.Detail)
	}
	want := processor.Detection{Method: processor.MethodModel, Reason: "valid-warranty: a photo of the plate", FirstTurn: true}
	if out.Detection != want || out.Scenario != "valid-warranty" {
		t.Errorf("scenario %s, detection %+v; want valid-warranty, %+v", out.Scenario, out.Detection, want)
	}
	// The outcome's JSON keeps the contract's method and says the choice
	// was made in the first turn.
	if b, err := json.Marshal(out.Detection); err != nil || string(b) != `{"method":"model","reason":"valid-warranty: a photo of the plate","first_turn":true}` {
		t.Errorf("detection JSON %s (%v)", b, err)
	}
	if diff := cmp.Diff([]string{"check_warranty ok", "create_ticket ok", "send_email ok"}, callsOf(out)); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if out.SerialSource != processor.SerialSourceAttachment {
		t.Errorf("serial_source %q, want attachment", out.SerialSource)
	}
	reqs := f.Requests()
	if len(reqs) != 3 || out.ModelCalls != 3 {
		t.Fatalf("%d model requests (outcome %d), want 3", len(reqs), out.ModelCalls)
	}

	// The opening: the candidates (never the follow-up scenario), the
	// chooser and the look-ups, a call required; the email with its photo.
	open := reqs[0]
	sys := systemText(open)
	// (The test tools bind no search_manual: product-question offers no
	// look-up here.)
	for _, w := range []string{"- valid-warranty: ", "- out-of-scope: ", "  look-ups first: check_warranty"} {
		if !strings.Contains(sys, w) {
			t.Errorf("opening system instruction lacks %q:\n%s", w, sys)
		}
	}
	if strings.Contains(sys, "- follow-up:") {
		t.Errorf("the follow-up scenario is offered for a new email:\n%s", sys)
	}
	if diff := cmp.Diff([]string{prompt.ChooseScenario, "check_warranty"}, declNames(open)); diff != "" {
		t.Errorf("opening declarations (-want +got):\n%s", diff)
	}
	if tc := open.ToolConfig; tc == nil || tc.FunctionCallingConfig == nil || tc.FunctionCallingConfig.Mode != "ANY" {
		t.Errorf("opening tool config %+v, want mode ANY", tc)
	}
	facts, err := prompt.ParseFacts(open.Contents[0].Parts[0].Text)
	if err != nil || facts.Scenario != "" || len(open.Contents[0].Parts) != 2 {
		t.Errorf("opening user turn: facts %+v (%v), %d parts; want no scenario yet, the text and the photo", facts, err, len(open.Contents[0].Parts))
	}

	// The loop: the scenario's stable prefix, the first user turn naming
	// it, then the opening turn and its answers.
	set := testScenarios(t)
	vw := set.Get("valid-warranty")
	for i, r := range reqs[1:] {
		if got, want := systemText(r), prompt.System(set.Main, vw.Body); got != want {
			t.Errorf("request %d: system instruction is not valid-warranty's", i+2)
		}
		var names []string
		for _, fn := range vw.Functions {
			names = append(names, fn.Name)
		}
		if diff := cmp.Diff(names, declNames(r)); diff != "" {
			t.Errorf("request %d declarations (-want +got):\n%s", i+2, diff)
		}
	}
	next := reqs[1]
	if facts, err := prompt.ParseFacts(next.Contents[0].Parts[0].Text); err != nil || facts.Scenario != "valid-warranty" {
		t.Errorf("loop's first user turn: facts %+v (%v), want scenario valid-warranty", facts, err)
	}
	tr := geminitest.Transcript(next.Contents)
	if len(tr) != 3 || !strings.Contains(tr[1], "call c0 "+prompt.ChooseScenario) || !strings.Contains(tr[1], "call c1 check_warranty") ||
		!strings.Contains(tr[2], "response c0 "+prompt.ChooseScenario+" ok") || !strings.Contains(tr[2], "response c1 check_warranty ok") {
		t.Errorf("loop's history:\n%s", strings.Join(tr, "\n"))
	}
}

// TestOpeningOnlyLooksUp: a model that calls, in the turn that chooses,
// an effect, the reply, or a function of another scenario has none of
// them run: effects and the reply are refused not_in_opening_turn (they
// run later, once the scenario's instructions were read), another
// scenario's functions unknown_function (product-question's search_manual,
// graceful-degradation's notify_staff).
func TestOpeningOnlyLooksUp(t *testing.T) {
	opening := geminitest.One(chooseValid, checkPhoto,
		geminitest.Call("x1", "create_ticket", map[string]any{"serial_number": "SN-48213-PL", "customer_email": "anna@customer.example", "priority": "normal"}),
		geminitest.Call("x2", "send_email", map[string]any{"to": "anna@customer.example", "subject": "Re: Reklamacja ekspresu", "body": "Dzień dobry,\n\nzgłoszenie przyjęte.\n\nZespół serwisu gwarancyjnego"}),
		geminitest.Call("x3", "search_manual", map[string]any{"query": "ekspres"}),
		geminitest.Call("x4", "notify_staff", map[string]any{"subject": "Klient", "body": "Proszę o kontakt."}),
	)
	f := geminitest.New(t, opening, openTicket, replyPhoto)
	e := newEnv(t, &agent.Gemini{Client: f.Client()})
	out := e.run(t, photoEmail(part{"tabliczka.png", "image/png", png(100)}))
	if out.Status != triage.StatusReplied || out.Detection.Method != processor.MethodModel || !out.Detection.FirstTurn {
		t.Fatalf("status %s/%s (%s), detection %+v; want replied, model in the first turn", out.Status, out.Reason, out.Detail, out.Detection)
	}
	want := []string{
		"check_warranty ok",
		"create_ticket " + string(dispatcher.CodeNotInOpening),
		"send_email " + string(dispatcher.CodeNotInOpening),
		"search_manual " + string(dispatcher.CodeUnknownFunction),
		"notify_staff " + string(dispatcher.CodeUnknownFunction),
		"create_ticket ok",
		"send_email ok",
	}
	if diff := cmp.Diff(want, callsOf(out)); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	for _, c := range out.FunctionCalls[1:5] {
		if c.Result != nil || c.DryRun || !c.Blocked {
			t.Errorf("%s in the opening turn: result %v, blocked %v; want refused unrun", c.Name, c.Result, c.Blocked)
		}
	}
	// The refusal said why to the model, in the turn after the opening.
	tr := geminitest.Transcript(f.Requests()[1].Contents)
	if !strings.Contains(tr[2], "response x1 create_ticket error "+string(dispatcher.CodeNotInOpening)) {
		t.Errorf("the model was not told why:\n%s", strings.Join(tr, "\n"))
	}
	// One ticket, one reply: what the opening asked for never ran.
	if out.TicketID != "TKT-000001" {
		t.Errorf("ticket %q, want TKT-000001", out.TicketID)
	}
	if n := len(outboxReplies(t, e)); n != 1 {
		t.Errorf("%d replies in the outbox, want 1", n)
	}
}

// outboxReplies lists the messages in e's outbox.
func outboxReplies(t *testing.T, e *env) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(e.outbox, "*.eml"))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestOpeningFallsBack: an opening turn that chooses nothing usable falls
// back as detection does, to the fallback scenario, with why; none of its
// calls runs, and the fallback scenario's loop starts afresh.
func TestOpeningFallsBack(t *testing.T) {
	notify := geminitest.One(geminitest.Call("n", "notify_staff", map[string]any{"subject": "Klient prosi o kontakt", "body": "Proszę o kontakt z klientem."}))
	reply := geminitest.One(geminitest.Call("s", "send_email", map[string]any{"to": "anna@customer.example", "subject": "Re: Reklamacja ekspresu",
		"body": "Dzień dobry,\n\notrzymaliśmy wiadomość; odpowie konsultant.\n\nZespół serwisu gwarancyjnego"}))
	choose := func(name string) map[string]any {
		return geminitest.Call("c0", prompt.ChooseScenario, map[string]any{"scenario": name, "reason": "the email says so"})
	}
	const unsure = "graceful-degradation: no rule matched; model unavailable: "
	tests := []struct {
		name    string
		opening []geminitest.Step
		reason  string
	}{
		{"an unknown scenario", []geminitest.Step{geminitest.One(choose("refund-now"), checkPhoto)},
			unsure + `detect: model chose unknown scenario "refund-now"`},
		{"a scenario never offered", []geminitest.Step{geminitest.One(choose("follow-up"), checkPhoto)},
			unsure + `detect: model chose scenario "follow-up", which was not offered`},
		{"no choice", []geminitest.Step{geminitest.One(checkPhoto,
			geminitest.Call("x", "send_email", map[string]any{"to": "anna@customer.example", "subject": "Re", "body": "Dzień dobry,\n\nok.\n\nZespół"}))},
			unsure + "detect: the first turn chose no scenario (no " + prompt.ChooseScenario + " call)"},
		{"text only", []geminitest.Step{geminitest.One(geminitest.Text("valid-warranty"))},
			unsure + "detect: the first turn chose no scenario (no " + prompt.ChooseScenario + " call)"},
		{"two choices", []geminitest.Step{geminitest.One(chooseValid, choose("out-of-scope"), checkPhoto)},
			unsure + "detect: the first turn called " + prompt.ChooseScenario + " 2 times"},
		{"no scenario name", []geminitest.Step{geminitest.One(geminitest.Call("c0", prompt.ChooseScenario, map[string]any{"scenario": 7}), checkPhoto)},
			unsure + "detect: " + prompt.ChooseScenario + " without a scenario name"},
		{"the model down", []geminitest.Step{unavailable},
			unsure + "agent: model error: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := geminitest.New(t, append(tt.opening, notify, reply)...)
			e := newEnv(t, &agent.Gemini{Client: f.Client()})
			out := e.run(t, photoEmail(part{"tabliczka.png", "image/png", png(100)}))
			if out.Scenario != "graceful-degradation" || out.Detection.Method != processor.MethodFallback || !strings.HasPrefix(out.Detection.Reason, tt.reason) {
				t.Errorf("scenario %s, detection %+v; want graceful-degradation, fallback, %q", out.Scenario, out.Detection, tt.reason)
			}
			if diff := cmp.Diff([]string{"notify_staff ok", "send_email ok"}, callsOf(out)); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if out.Status != triage.StatusReplied || out.ModelCalls != len(tt.opening)+2 {
				t.Errorf("status %s/%s (%s), %d model calls; want replied, %d", out.Status, out.Reason, out.Detail, out.ModelCalls, len(tt.opening)+2)
			}
			// The fallback's loop starts from the email alone.
			reqs := f.Requests()
			if n := len(reqs[len(tt.opening)].Contents); n != 1 {
				t.Errorf("the fallback's first request has %d contents, want 1", n)
			}
		})
	}
}

// TestOpeningWithoutSerial: an email with no serial number and nothing
// the model is sent is offered no look-up that needs one (the dispatcher
// would refuse any serial the model gave); a turn that only chooses
// leaves the loop to start from the email, as the scenario's always does.
func TestOpeningWithoutSerial(t *testing.T) {
	f := geminitest.New(t,
		geminitest.One(geminitest.Call("c0", prompt.ChooseScenario, map[string]any{"scenario": "out-of-scope", "reason": "a job application"})),
		geminitest.One(geminitest.Call("c1", "send_email", map[string]any{"to": "anna@example.pl", "subject": "Re: Praca",
			"body": "Dzień dobry,\n\nta skrzynka obsługuje wyłącznie sprawy gwarancyjne.\n\nZespół serwisu gwarancyjnego"})))
	e := newEnv(t, &agent.Gemini{Client: f.Client()})
	out := e.run(t, convEmail(anna, "Praca", "<job@example.pl>", "Dzień dobry, szukam pracy jako specjalista ds. marketingu."))
	if out.Status != triage.StatusReplied || out.Scenario != "out-of-scope" || out.Detection.Method != processor.MethodModel || !out.Detection.FirstTurn || out.ModelCalls != 2 {
		t.Fatalf("status %s/%s (%s), scenario %s, detection %+v, %d model calls; want replied out-of-scope by the model in the first turn, in 2",
			out.Status, out.Reason, out.Detail, out.Scenario, out.Detection, out.ModelCalls)
	}
	reqs := f.Requests()
	if diff := cmp.Diff([]string{prompt.ChooseScenario}, declNames(reqs[0])); diff != "" {
		t.Errorf("opening declarations (-want +got):\n%s", diff)
	}
	if sys := systemText(reqs[0]); strings.Contains(sys, "look-ups first") {
		t.Errorf("opening offers look-ups the email cannot feed:\n%s", sys)
	}
	if n := len(reqs[1].Contents); n != 1 {
		t.Errorf("the loop's first request has %d contents, want the email alone", n)
	}
}

// TestOpeningRetriedAndClipped: an opening turn the model answers after a
// 503 is retried like the loop's turns (its calls counted), and the
// model's reason is kept to one short line in the outcome.
func TestOpeningRetriedAndClipped(t *testing.T) {
	long := "A job application.\n\n  " + strings.Repeat("x", 300)
	f := geminitest.New(t, unavailable,
		geminitest.One(geminitest.Call("c0", prompt.ChooseScenario, map[string]any{"scenario": "out-of-scope", "reason": long})),
		geminitest.One(geminitest.Call("c1", "send_email", map[string]any{"to": "anna@example.pl", "subject": "Re: Praca",
			"body": "Dzień dobry,\n\nta skrzynka obsługuje wyłącznie sprawy gwarancyjne.\n\nZespół serwisu gwarancyjnego"})))
	e := newEnv(t, &agent.Gemini{Client: f.Client()}, func(ac *agent.Config, _ *processor.Config) {
		ac.MaxRetries = 1
		ac.Sleep = func(context.Context, time.Duration) error { return nil }
	})
	out := e.run(t, convEmail(anna, "Praca", "<job@example.pl>", "Dzień dobry, szukam pracy jako specjalista ds. marketingu."))
	want := processor.Detection{Method: processor.MethodModel, FirstTurn: true,
		Reason: "out-of-scope: A job application. " + strings.Repeat("x", 180) + "…"}
	if diff := cmp.Diff(want, out.Detection); diff != "" || out.Status != triage.StatusReplied || out.ModelCalls != 3 {
		t.Errorf("status %s/%s (%s), %d model calls (want replied in 3); detection (-want +got):\n%s", out.Status, out.Reason, out.Detail, out.ModelCalls, diff)
	}
}

// chooser answers every opening turn (a declared choose_scenario) with
// the choice of scenario alone, and every other turn as next does.
type chooser struct {
	next     agent.Model
	scenario string
	opened   atomic.Int64
}

func (c *chooser) GenerateContent(ctx context.Context, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	for _, t := range cfg.Tools {
		for _, d := range t.FunctionDeclarations {
			if d.Name == prompt.ChooseScenario {
				c.opened.Add(1)
				return resp(&genai.Part{FunctionCall: &genai.FunctionCall{ID: "c0", Name: prompt.ChooseScenario,
					Args: map[string]any{"scenario": c.scenario, "reason": "not a warranty matter"}}}), nil
			}
		}
	}
	return c.next.GenerateContent(ctx, model, contents, cfg)
}

// TestOpeningConcurrent: one Processor takes emails the rules place and
// emails whose first turn chooses at the same time (run with -race); each
// is detected its own way, and only the unsure ones open with a choice.
func TestOpeningConcurrent(t *testing.T) {
	m := &chooser{next: &scripted{}, scenario: "out-of-scope"}
	e := newEnv(t, m)
	const n = 8
	outs := make([]processor.Outcome, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			from := fmt.Sprintf("Klient %d <k%d@example.pl>", i, i)
			id := fmt.Sprintf("<c%d@example.pl>", i)
			text := "Dzień dobry, chcielibyśmy zaproponować współpracę marketingową."
			if i%2 == 0 {
				text = "Dzień dobry, mój ekspres SN-48213-PL nie działa. Proszę o naprawę gwarancyjną."
			}
			outs[i] = e.proc.Process(context.Background(), processor.Input{Name: fmt.Sprintf("%d.eml", i), Raw: convEmail(from, "Sprawa", id, text)})
		})
	}
	wg.Wait()
	var got, want []string
	for i, o := range outs {
		got = append(got, fmt.Sprintf("%s %s %s first_turn=%v", o.Status, o.Scenario, o.Detection.Method, o.Detection.FirstTurn))
		if i%2 == 0 {
			want = append(want, "replied valid-warranty rules first_turn=false")
		} else {
			want = append(want, "replied out-of-scope model first_turn=true")
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if o := m.opened.Load(); o != n/2 {
		t.Errorf("%d opening turns, want %d", o, n/2)
	}
}

// TestOpeningCanceled: an opening turn whose context ends falls back, and
// the reason names why; no call of the scenario runs.
func TestOpeningCanceled(t *testing.T) {
	m := &scripted{block: true}
	e := newEnv(t, m)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for m.calls.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	out := e.proc.Process(ctx, processor.Input{Name: "in.eml", Raw: convEmail(anna, "Praca", "<job@example.pl>", "Dzień dobry, szukam pracy jako specjalista ds. marketingu.")})
	if out.Detection.Method != processor.MethodFallback || out.Detection.FirstTurn || !strings.Contains(out.Detection.Reason, "context canceled") {
		t.Errorf("detection %+v; want fallback naming the cancellation", out.Detection)
	}
	if out.Status == triage.StatusReplied || len(out.FunctionCalls) != 0 {
		t.Errorf("status %s/%s (%s), calls %v; want nothing sent, no call", out.Status, out.Reason, out.Detail, callsOf(out))
	}
}
