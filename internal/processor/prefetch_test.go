package processor_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/agent"
	"triage/internal/instructions"
	"triage/internal/processor"
	"triage/internal/prompt"
	"triage/internal/testkit/geminitest"
)

// prefetchClaim is a warranty claim whose text names SN-48213-PL (valid
// until 2027-05-31 in newEnv's registry).
const prefetchClaim = "Dzień dobry, mój ekspres SN-48213-PL nie działa. Proszę o naprawę gwarancyjną."

// prefetchReply is a reply the scripted models send.
var prefetchReply = map[string]any{"to": "anna@example.pl", "subject": "Re: Reklamacja",
	"body": "Dzień dobry,\n\ngwarancja SN-48213-PL jest ważna do 31 maja 2027.\n\nZespół serwisu"}

// calls lists the records: name, "prefetched" for the look-ups the
// pipeline ran, and ok or the error code.
func calls(out processor.Outcome) []string {
	var got []string
	for _, c := range out.FunctionCalls {
		s := c.Name
		if c.Prefetched {
			s += " prefetched"
		}
		switch {
		case c.OK:
			s += " ok"
		case c.Error != nil:
			s += " " + string(c.Error.Code)
		}
		got = append(got, s)
	}
	return got
}

// lookups reads the look-ups block of a request's first user turn.
func lookups(t *testing.T, r geminitest.Request) []prompt.Lookup {
	t.Helper()
	f, err := prompt.ParseFacts(r.Contents[0].Parts[0].Text)
	if err != nil {
		t.Fatal(err)
	}
	return f.Lookups
}

// TestPrefetchedWarranty: check_warranty (prefetch: true in the shipped
// tools.yaml) runs before the first model turn for the message's serial,
// its result is in the first user turn's look-ups block (not as function
// call parts the model never made), and it counts as answered in an
// earlier turn: a model that opens the ticket at once is allowed, and one
// that ignores the look-up and checks again works too.
func TestPrefetchedWarranty(t *testing.T) {
	ticket := geminitest.One(geminitest.Call("c1", "create_ticket", map[string]any{
		"serial_number": "SN-48213-PL", "customer_email": "anna@example.pl", "priority": "normal", "summary": "Ekspres nie działa."}))
	check := geminitest.One(geminitest.Call("c0", "check_warranty", map[string]any{"serial_number": "SN-48213-PL"}))
	send := geminitest.One(geminitest.Call("c2", "send_email", prefetchReply))
	for _, tt := range []struct {
		name  string
		steps []geminitest.Step
		want  []string
	}{
		{"ticket at once", []geminitest.Step{ticket, send},
			[]string{"check_warranty prefetched ok", "create_ticket ok", "send_email ok"}},
		{"checks again anyway", []geminitest.Step{check, ticket, send},
			[]string{"check_warranty prefetched ok", "check_warranty ok", "create_ticket ok", "send_email ok"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := geminitest.New(t, tt.steps...)
			e := newEnv(t, &agent.Gemini{Client: f.Client()})
			out := e.proc.Process(t.Context(), processor.Input{Name: "in.eml", Raw: eml("Anna <anna@example.pl>", "Reklamacja", prefetchClaim)})
			if out.Status != triage.StatusReplied {
				t.Fatalf("%s/%s: %s", out.Status, out.Reason, out.Detail)
			}
			if diff := cmp.Diff(tt.want, calls(out)); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if out.ModelCalls != len(tt.steps) || out.TicketID == "" {
				t.Errorf("%d model calls, ticket %q; want %d and a ticket", out.ModelCalls, out.TicketID, len(tt.steps))
			}
			reqs := f.Requests()
			got := lookups(t, reqs[0])
			if len(got) != 1 || got[0].Function != "check_warranty" || got[0].Args["serial_number"] != "SN-48213-PL" ||
				got[0].Response["ok"] != true {
				t.Fatalf("look-ups of the first turn: %+v", got)
			}
			res, _ := got[0].Response["result"].(map[string]any)
			if res["status"] != "valid" || res["expiration_date"] != "2027-05-31" {
				t.Errorf("look-up result %v, want the registry's", res)
			}
			for i, r := range reqs {
				for _, c := range r.Contents {
					for _, p := range c.Parts {
						if p.FunctionCall != nil && p.FunctionCall.ID != "c0" && p.FunctionCall.ID != "c1" && p.FunctionCall.ID != "c2" {
							t.Errorf("request %d holds a function call the model never made: %+v", i, p.FunctionCall)
						}
					}
				}
			}
		})
	}
}

// TestPrefetchRefusesOtherSerial: a serial the message does not hold is
// refused as before (no attachment was sent), and a ticket for it too.
func TestPrefetchRefusesOtherSerial(t *testing.T) {
	f := geminitest.New(t,
		geminitest.One(geminitest.Call("c0", "check_warranty", map[string]any{"serial_number": "SN-99999-DE"})),
		geminitest.One(geminitest.Call("c1", "create_ticket", map[string]any{
			"serial_number": "SN-99999-DE", "customer_email": "anna@example.pl", "priority": "normal", "summary": "x"})),
		geminitest.One(geminitest.Call("c2", "send_email", prefetchReply)))
	e := newEnv(t, &agent.Gemini{Client: f.Client()})
	out := e.proc.Process(t.Context(), processor.Input{Name: "in.eml", Raw: eml("Anna <anna@example.pl>", "Reklamacja", prefetchClaim)})
	want := []string{"check_warranty prefetched ok", "check_warranty serial_not_in_message", "create_ticket serial_not_in_message", "send_email ok"}
	if diff := cmp.Diff(want, calls(out)); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if out.TicketID != "" {
		t.Errorf("ticket %s opened for a serial the message does not hold", out.TicketID)
	}
}

// TestPrefetchNoSerial: a message without a serial has no look-up run
// and no look-ups block.
func TestPrefetchNoSerial(t *testing.T) {
	m := &scripted{}
	e := newEnv(t, m)
	out := e.proc.Process(t.Context(), processor.Input{Name: "in.eml", Raw: eml("Anna <anna@example.pl>", "Reklamacja",
		"Dzień dobry, mój ekspres nie działa, proszę o naprawę gwarancyjną. Numeru seryjnego nie mam pod ręką.")})
	if out.Status != triage.StatusReplied || len(out.SerialNumbers) != 0 {
		t.Fatalf("%s (%s), serials %v", out.Status, out.Detail, out.SerialNumbers)
	}
	for _, c := range out.FunctionCalls {
		if c.Prefetched {
			t.Errorf("prefetched %s without a serial in the message", c.Name)
		}
	}
	if f := m.facts.Load(); f == nil || f.Lookups != nil {
		t.Errorf("the model's first turn: facts %+v, want no look-ups", f)
	}
}

// TestPrefetchAndPhotoSerial: the message's serial is looked up before the
// first turn; a serial the model reads from a photo it was sent is still
// checked by the model's own call (serial_source attachment) and may get
// the ticket.
func TestPrefetchAndPhotoSerial(t *testing.T) {
	jpeg := append([]byte{0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 'J', 'F', 'I', 'F', 0}, make([]byte, 300)...)
	raw := []byte(strings.Replace(string(photoEmail(part{"tabliczka.jpg", "image/jpeg", jpeg})),
		"Numer seryjny jest na zdjęciu tabliczki.", "Stary ekspres SN98765, nowy na zdjęciu tabliczki.", 1))
	f := geminitest.New(t,
		geminitest.One(geminitest.Call("c0", "check_warranty", map[string]any{"serial_number": "SN-48213-PL"})),
		geminitest.One(geminitest.Call("c1", "create_ticket", map[string]any{
			"serial_number": "SN-48213-PL", "customer_email": "anna@customer.example", "priority": "normal", "summary": "Ekspres nie grzeje."})),
		geminitest.One(geminitest.Call("c2", "send_email", map[string]any{"to": "anna@customer.example", "subject": "Re: Reklamacja ekspresu",
			"body": "Dzień dobry,\n\ngwarancja SN-48213-PL (numer odczytany ze zdjęcia) jest ważna do 31 maja 2027.\n\nZespół serwisu"})))
	e := newEnv(t, &agent.Gemini{Client: f.Client()})
	out := e.proc.Process(t.Context(), processor.Input{Name: "photo.eml", Raw: raw})
	want := []string{"check_warranty prefetched ok", "check_warranty ok", "create_ticket ok", "send_email ok"}
	if diff := cmp.Diff(want, calls(out)); diff != "" {
		t.Fatalf("calls (-want +got):\n%s\n%s: %s", diff, out.Status, out.Detail)
	}
	if pre := out.FunctionCalls[0]; pre.Args["serial_number"] != "SN98765" || pre.SerialSource != "" {
		t.Errorf("prefetched %v (serial_source %q), want the message's SN98765", pre.Args, pre.SerialSource)
	}
	if c := out.FunctionCalls[1]; c.SerialSource != "attachment" || out.SerialSource != processor.SerialSourceAttachment {
		t.Errorf("the photo's serial: serial_source %q, outcome %q", c.SerialSource, out.SerialSource)
	}
	b, _ := json.Marshal(out.FunctionCalls[0])
	if !strings.Contains(string(b), `"prefetched":true`) {
		t.Errorf("the outcome's record does not say prefetched: %s", b)
	}
}

// TestPrefetchedDecision: the decision the prefetched check reached is the
// email's, as if the model had called check_warranty: a reply at once
// naming another basis is refused (decision_mismatch), one naming the
// computed basis and a remedy it offers is sent, and the outcome carries
// the decision.
func TestPrefetchedDecision(t *testing.T) {
	body := "Dzień dobry,\n\ngwarancja urządzenia SN-48213-PL jest ważna. Prosimy o kontakt w sprawie naprawy.\n\nZespół serwisu"
	reply := func(id, basis string) geminitest.Step {
		return geminitest.One(geminitest.Call(id, "send_email", map[string]any{"to": "anna@example.pl", "subject": "Re: Reklamacja",
			"body": body, "decision": basis, "commitments": []any{"repair"}}))
	}
	f := geminitest.New(t, reply("c1", "statutory"), reply("c2", "guarantee"))
	p, _ := lexiconEnv(t, &agent.Gemini{Client: f.Client()})
	out := p.Process(t.Context(), processor.Input{Name: "in.eml", Raw: eml("Anna <anna@example.pl>", "Reklamacja", prefetchClaim)})
	want := []string{"check_warranty prefetched ok", "send_email decision_mismatch", "send_email ok"}
	if diff := cmp.Diff(want, calls(out)); diff != "" {
		t.Fatalf("calls (-want +got):\n%s\n%s: %s", diff, out.Status, out.Detail)
	}
	if out.Decision == nil || out.Decision.Basis != "guarantee" || out.Status != triage.StatusReplied {
		t.Errorf("%s, decision %+v; want replied on the guarantee", out.Status, out.Decision)
	}
}

// claimInstructions writes an instructions directory whose warranty
// claim has no rules (the model chooses it in the email's first turn) and
// declares check_warranty (prefetch: true in the shipped tools.yaml), with
// a fallback scenario; it returns the loaded set.
func claimInstructions(t *testing.T) *instructions.Scenarios {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"main.md": "Answer warranty emails.\n",
		"scenarios/claim.md": `---
name: claim
description: A warranty claim for a broken machine, with its serial number.
available_functions:
  - name: check_warranty
    description: Check a serial number's warranty.
    parameters: {type: object, properties: {serial_number: {type: string}}, required: [serial_number]}
  - name: send_email
    description: Send the reply.
    parameters: {type: object, properties: {to: {type: string}, subject: {type: string}, body: {type: string}}, required: [to, subject, body]}
---
Check the warranty, then reply.
`,
		"scenarios/other.md": `---
name: other
description: Anything else.
fallback: true
available_functions:
  - name: send_email
    description: Send the reply.
    parameters: {type: object, properties: {to: {type: string}, subject: {type: string}, body: {type: string}}, required: [to, subject, body]}
---
Reply politely.
`,
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set, err := instructions.LoadScenarios(os.DirFS(dir), routes)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestPrefetchAfterOpeningChoice: an email no rule places, whose first
// turn only chooses the scenario (it calls none of the look-ups it was
// offered), gets the chosen scenario's prefetched look-ups before the
// scenario's first turn, as a rules-chosen email does: the claim is
// answered in two model calls, the check in the look-ups block.
func TestPrefetchAfterOpeningChoice(t *testing.T) {
	set := claimInstructions(t)
	f := geminitest.New(t,
		geminitest.One(geminitest.Call("c0", prompt.ChooseScenario, map[string]any{"scenario": "claim", "reason": "a broken machine"})),
		geminitest.One(geminitest.Call("c2", "send_email", prefetchReply)))
	e := newEnv(t, &agent.Gemini{Client: f.Client()}, func(_ *agent.Config, pc *processor.Config) { pc.Scenarios = set })
	out := e.proc.Process(t.Context(), processor.Input{Name: "in.eml", Raw: eml("Anna <anna@example.pl>", "Reklamacja", prefetchClaim)})
	if out.Status != triage.StatusReplied || out.Scenario != "claim" || !out.Detection.FirstTurn || out.ModelCalls != 2 {
		t.Fatalf("%s/%s (%s), scenario %s, detection %+v, %d model calls; want replied, claim chosen in the first turn, 2 calls",
			out.Status, out.Reason, out.Detail, out.Scenario, out.Detection, out.ModelCalls)
	}
	if diff := cmp.Diff([]string{"check_warranty prefetched ok", "send_email ok"}, calls(out)); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	reqs := f.Requests()
	if d := declNames(reqs[0]); !slices.Contains(d, "check_warranty") {
		t.Errorf("the opening turn did not offer check_warranty: %v", d)
	}
	if got := lookups(t, reqs[0]); len(got) != 0 {
		t.Errorf("the opening turn holds look-ups: %+v", got)
	}
	got := lookups(t, reqs[1])
	if len(got) != 1 || got[0].Function != "check_warranty" || got[0].Args["serial_number"] != "SN-48213-PL" || got[0].Response["ok"] != true {
		t.Errorf("look-ups of the scenario's first turn: %+v", got)
	}
	if n := len(reqs[1].Contents); n != 1 {
		t.Errorf("the scenario's first request has %d contents, want 1 (the turn that only chose is left out)", n)
	}
}
