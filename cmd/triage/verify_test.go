package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"triage"
	"triage/internal/decision"
	"triage/internal/dispatcher"
	"triage/internal/processor"
	"triage/internal/testkit/geminitest"
	"triage/internal/testkit/openaitest"
	"triage/internal/trace"
)

// The reply the scripted main model sends for the sample valid-warranty
// email: every fact in it is backed (the registry's date, the ticket), so
// the grounding check and the lexicon let it through.
const (
	verifyTruthful = "Dzień dobry,\n\ngwarancja ekspresu Aroma 5000 (SN-48213-PL) jest ważna do 31 maja 2027. Otworzyliśmy zgłoszenie TKT-000001."
	// verifyPromise adds a promise no source supports and no lexicon
	// phrase catches: only the verifier sees it.
	verifyPromiseWords = "Dorzucimy też gratis nowy młynek do kawy."
	verifyPromise      = verifyTruthful + " " + verifyPromiseWords
)

// verifyAnswer is a verifier's JSON answer listing statements.
func verifyAnswer(statements ...decision.Statement) string {
	if statements == nil {
		statements = []decision.Statement{}
	}
	b, _ := json.Marshal(map[string]any{"unsupported": statements})
	return string(b)
}

// verifyRun is one `triage process --json` of the sample email.
type verifyRun struct {
	out    processor.Outcome
	code   int
	stderr string
	outbox string
}

// processVerified runs the sample valid-warranty email through process
// with the given arguments (the model's and the verifier's).
func processVerified(t *testing.T, args ...string) verifyRun {
	t.Helper()
	dir := t.TempDir()
	outbox := filepath.Join(dir, "outbox")
	all := append([]string{"process", "--json", "--warranty-csv", "../../examples/warranty.csv",
		"--tickets-db", filepath.Join(dir, "t.db"), "--outbox", outbox}, args...)
	var stdout, stderrb bytes.Buffer
	code := run(context.Background(), append(all, "../../examples/inbox/01-valid-warranty-pl.eml"), strings.NewReader(""), &stdout, &stderrb)
	stderr := stderrb.String()
	outs := decodeOutcomes(t, stdout.String())
	if len(outs) != 1 {
		t.Fatalf("exit %d, %d outcomes\nstderr: %s", code, len(outs), stderr)
	}
	return verifyRun{out: outs[0], code: code, stderr: stderr, outbox: outbox}
}

// sentReplies lists the .eml files of the outbox (drafts aside).
func sentReplies(t *testing.T, outbox string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(outbox, "*.eml"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sendCalls are the send_email calls of an outcome: each one's error code
// ("" when it went out) and the verifier's reading.
func sendCalls(out processor.Outcome) (codes []string, readings []*decision.Verification) {
	for _, c := range out.FunctionCalls {
		if c.Name != dispatcher.FuncSendEmail {
			continue
		}
		code := ""
		if c.Error != nil {
			code = string(c.Error.Code)
		}
		codes = append(codes, code)
		readings = append(readings, c.Verification)
	}
	return codes, readings
}

// openAIMain scripts the main model over the OpenAI stand-in: check the
// warranty, open a ticket, then send each body in turn (each refusal is
// answered by the next body).
func openAIMain(bodies ...string) []openaitest.Step {
	steps := []openaitest.Step{
		openaitest.Calls(openaitest.Call{ID: "call_1", Name: "check_warranty", Args: map[string]any{"serial_number": "SN-48213-PL"}}),
		openaitest.Calls(openaitest.Call{ID: "call_2", Name: "create_ticket", Args: map[string]any{
			"serial_number": "SN-48213-PL", "customer_email": "anna.nowak@example.pl", "priority": "normal", "summary": "Ekspres nie grzeje wody."}}),
	}
	for i, b := range bodies {
		steps = append(steps, openaitest.Calls(openaitest.Call{ID: "call_s" + string(rune('a'+i)), Name: "send_email", Args: map[string]any{
			"to": "anna.nowak@example.pl", "subject": "Re: Reklamacja – ekspres nie grzeje wody", "body": b,
			"decision": "guarantee", "commitments": []any{"ticket"}}}))
	}
	return steps
}

// geminiMain is openAIMain over the Gemini stand-in.
func geminiMain(bodies ...string) []geminitest.Step {
	steps := []geminitest.Step{
		geminitest.One(geminitest.Call("c1", "check_warranty", geminitest.Obj("serial_number", "SN-48213-PL"))),
		geminitest.One(geminitest.Call("c2", "create_ticket", geminitest.Obj(
			"serial_number", "SN-48213-PL", "customer_email", "anna.nowak@example.pl", "priority", "normal", "summary", "Ekspres nie grzeje wody."))),
	}
	for i, b := range bodies {
		steps = append(steps, geminitest.One(geminitest.Call("s"+string(rune('a'+i)), "send_email", geminitest.Obj(
			"to", "anna.nowak@example.pl", "subject", "Re: Reklamacja – ekspres nie grzeje wody", "body", b,
			"decision", "guarantee", "commitments", []any{"ticket"}))))
	}
	return steps
}

// TestVerifierGeminiBesideOpenAI: the main model speaks OpenAI's Chat
// Completions, the verifier is a Gemini model (another provider). Each
// rule is broken on purpose: a reply with an unsupported promise the
// lexicon misses is refused on the verifier's word and rewritten; a
// verifier that quotes words the reply lacks is ignored; a verifier that
// fails, answers garbage or hangs keeps the reply from going out
// (verifier_unavailable, left for a person).
func TestVerifierGeminiBesideOpenAI(t *testing.T) {
	noDefaultConfig(t)
	flagged := decision.Statement{Quote: verifyPromiseWords, Kind: decision.KindPromise, Reason: "no commitment declares a free grinder"}
	lie := decision.Statement{Quote: "Zwrócimy Pani pieniądze", Kind: decision.KindPromise, Reason: "a refund the decision does not allow"}
	for _, tt := range []struct {
		name     string
		bodies   []string
		verifier []geminitest.Step
		args     []string
		status   triage.Status
		reason   triage.Reason
		codes    []string
		verdicts []decision.Verdict
	}{
		{name: "flagged promise, rewritten", bodies: []string{verifyPromise, verifyTruthful},
			verifier: []geminitest.Step{geminitest.One(geminitest.Text(verifyAnswer(flagged))), geminitest.One(geminitest.Text(verifyAnswer()))},
			status:   triage.StatusReplied, codes: []string{"ungrounded_claim", ""}, verdicts: []decision.Verdict{decision.VerifyFlagged, decision.VerifyPass}},
		{name: "lying verifier ignored", bodies: []string{verifyTruthful},
			verifier: []geminitest.Step{geminitest.One(geminitest.Text(verifyAnswer(lie)))},
			status:   triage.StatusReplied, codes: []string{""}, verdicts: []decision.Verdict{decision.VerifyPass}},
		{name: "draft read too", bodies: []string{verifyPromise, verifyTruthful}, args: []string{"--reply-mode", "draft"},
			verifier: []geminitest.Step{geminitest.One(geminitest.Text(verifyAnswer(flagged))), geminitest.One(geminitest.Text(verifyAnswer()))},
			status:   triage.StatusDrafted, codes: []string{"ungrounded_claim", ""}, verdicts: []decision.Verdict{decision.VerifyFlagged, decision.VerifyPass}},
		{name: "verifier down", bodies: []string{verifyTruthful},
			verifier: []geminitest.Step{{Status: 503, Body: `{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`}},
			status:   triage.StatusFailed, reason: triage.ReasonVerifierUnavailable, codes: []string{"verifier_unavailable"}, verdicts: []decision.Verdict{decision.VerifyError}},
		{name: "verifier garbage", bodies: []string{verifyTruthful},
			verifier: []geminitest.Step{geminitest.One(geminitest.Text("The reply looks fine to me."))},
			status:   triage.StatusFailed, reason: triage.ReasonVerifierUnavailable, codes: []string{"verifier_unavailable"}, verdicts: []decision.Verdict{decision.VerifyError}},
		{name: "verifier hangs", bodies: []string{verifyTruthful}, args: []string{"--verify-timeout", "300ms"},
			verifier: []geminitest.Step{{Hang: true}},
			status:   triage.StatusFailed, reason: triage.ReasonVerifierUnavailable, codes: []string{"verifier_unavailable"}, verdicts: []decision.Verdict{decision.VerifyError}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			main := openaitest.New(t, openAIMain(tt.bodies...)...)
			ver := geminitest.New(t, tt.verifier...)
			t.Setenv("OPENAI_API_KEY", openaitest.APIKey)
			t.Setenv("GEMINI_API_KEY", geminitest.APIKey)
			t.Setenv("GOOGLE_GEMINI_BASE_URL", ver.URL())
			r := processVerified(t, append([]string{"--provider", "openai", "--base-url", main.BaseURL(), "--model", "gpt-test",
				"--verify-provider", "gemini", "--verify-model", "gemini-verifier"}, tt.args...)...)
			checkVerified(t, r, tt.status, tt.reason, tt.codes, tt.verdicts, "gemini-verifier")
			if main.Left() != 0 || ver.Left() != 0 {
				t.Errorf("steps left: main %d, verifier %d", main.Left(), ver.Left())
			}
			reqs := ver.Requests()
			if len(reqs) != len(tt.verdicts) {
				t.Fatalf("%d verifier requests, want one per send attempt (%d)", len(reqs), len(tt.verdicts))
			}
			for i, b := range ver.Bodies() {
				var raw struct {
					GenerationConfig struct {
						ResponseMIMEType   string         `json:"responseMimeType"`
						ResponseJSONSchema map[string]any `json:"responseJsonSchema"`
					} `json:"generationConfig"`
				}
				if err := json.Unmarshal(b, &raw); err != nil {
					t.Fatal(err)
				}
				if raw.GenerationConfig.ResponseMIMEType != "application/json" || raw.GenerationConfig.ResponseJSONSchema == nil {
					t.Errorf("verifier request %d asks for no structured answer: %+v", i, raw.GenerationConfig)
				}
				if reqs[i].Model != "gemini-verifier" {
					t.Errorf("verifier request %d for model %q", i, reqs[i].Model)
				}
				text := reqs[i].Contents[0].Parts[0].Text
				for _, want := range []string{tt.bodies[i], `"basis":"guarantee"`, "TKT-000001", "commitments: ticket"} {
					if !strings.Contains(text, want) {
						t.Errorf("verifier request %d lacks %q:\n%s", i, want, text)
					}
				}
			}
			if !strings.Contains(r.stderr, "replies verified by Gemini API at "+ver.URL()+", model gemini-verifier") {
				t.Errorf("stderr does not name the verifier: %s", r.stderr)
			}
		})
	}
}

// TestVerifierOpenAIBesideGemini: the main model is Gemini, the verifier
// an OpenAI-compatible endpoint with its own key (--verify-api-key-env):
// the same rules hold.
func TestVerifierOpenAIBesideGemini(t *testing.T) {
	noDefaultConfig(t)
	flagged := decision.Statement{Quote: "dorzucimy też  gratis\nnowy młynek", Kind: decision.KindPromise, Reason: "no commitment declares a free grinder"}
	lie := decision.Statement{Quote: "Zwrócimy Pani pieniądze", Kind: decision.KindPromise, Reason: "a refund"}
	for _, tt := range []struct {
		name     string
		bodies   []string
		verifier []openaitest.Step
		after    int // the main model's text answers after its last send
		status   triage.Status
		reason   triage.Reason
		codes    []string
		verdicts []decision.Verdict
	}{
		{name: "flagged promise, rewritten", bodies: []string{verifyPromise, verifyTruthful},
			verifier: []openaitest.Step{openaitest.Text(verifyAnswer(flagged)), openaitest.Text(verifyAnswer())},
			status:   triage.StatusReplied, codes: []string{"ungrounded_claim", ""}, verdicts: []decision.Verdict{decision.VerifyFlagged, decision.VerifyPass}},
		{name: "flagged twice, left for a person", bodies: []string{verifyPromise, verifyPromise}, after: 2,
			verifier: []openaitest.Step{openaitest.Text(verifyAnswer(flagged)), openaitest.Text(verifyAnswer(flagged))},
			status:   triage.StatusFailed, reason: triage.ReasonUngroundedClaim, codes: []string{"ungrounded_claim", "ungrounded_claim"}, verdicts: []decision.Verdict{decision.VerifyFlagged, decision.VerifyFlagged}},
		{name: "lying verifier ignored", bodies: []string{verifyTruthful},
			verifier: []openaitest.Step{openaitest.Text(verifyAnswer(lie))},
			status:   triage.StatusReplied, codes: []string{""}, verdicts: []decision.Verdict{decision.VerifyPass}},
		{name: "verifier down", bodies: []string{verifyTruthful},
			verifier: []openaitest.Step{openaitest.Error(500, "boom", "server_error")},
			status:   triage.StatusFailed, reason: triage.ReasonVerifierUnavailable, codes: []string{"verifier_unavailable"}, verdicts: []decision.Verdict{decision.VerifyError}},
		{name: "verifier answers an unknown kind", bodies: []string{verifyTruthful},
			verifier: []openaitest.Step{openaitest.Text(`{"unsupported":[{"quote":"Dzień dobry","kind":"greeting","reason":"x"}]}`)},
			status:   triage.StatusFailed, reason: triage.ReasonVerifierUnavailable, codes: []string{"verifier_unavailable"}, verdicts: []decision.Verdict{decision.VerifyError}},
		{name: "verifier refuses", bodies: []string{verifyTruthful},
			verifier: []openaitest.Step{openaitest.Refusal("I cannot help with that.")},
			status:   triage.StatusFailed, reason: triage.ReasonVerifierUnavailable, codes: []string{"verifier_unavailable"}, verdicts: []decision.Verdict{decision.VerifyError}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			steps := geminiMain(tt.bodies...)
			for range tt.after {
				steps = append(steps, geminitest.One(geminitest.Text("Nie mogę wysłać odpowiedzi.")))
			}
			main := geminitest.New(t, steps...)
			ver := openaitest.New(t, tt.verifier...)
			t.Setenv("GEMINI_API_KEY", geminitest.APIKey)
			t.Setenv("GOOGLE_GEMINI_BASE_URL", main.URL())
			t.Setenv("OPENAI_API_KEY", "")
			t.Setenv("VERIFIER_KEY", openaitest.APIKey)
			r := processVerified(t, "--verify-provider", "openai", "--verify-base-url", ver.BaseURL(), "--verify-model", "gpt-verifier", "--verify-api-key-env", "VERIFIER_KEY")
			checkVerified(t, r, tt.status, tt.reason, tt.codes, tt.verdicts, "gpt-verifier")
			if main.Left() != 0 || ver.Left() != 0 {
				t.Errorf("steps left: main %d, verifier %d", main.Left(), ver.Left())
			}
			reqs := ver.Requests()
			if len(reqs) != len(tt.verdicts) {
				t.Fatalf("%d verifier requests, want one per send attempt (%d)", len(reqs), len(tt.verdicts))
			}
			for i, rq := range reqs {
				if rq.Model != "gpt-verifier" || rq.ResponseFormat["type"] != "json_schema" {
					t.Errorf("verifier request %d: model %q, response_format %v; want gpt-verifier and json_schema", i, rq.Model, rq.ResponseFormat)
				}
				if b, _ := json.Marshal(rq.Messages); !strings.Contains(string(b), "TKT-000001") {
					t.Errorf("verifier request %d lacks the tool results: %s", i, b)
				}
			}
		})
	}
}

// checkVerified checks a run's status, its send_email calls' codes and
// verdicts, the outcome's verification, and that a reply is in the outbox
// only when the outcome says replied.
func checkVerified(t *testing.T, r verifyRun, status triage.Status, reason triage.Reason, codes []string, verdicts []decision.Verdict, model string) {
	t.Helper()
	o := r.out
	if o.Status != status || o.Reason != reason {
		t.Errorf("status %s %s (%s), want %s %s\nstderr: %s", o.Status, o.Reason, o.Detail, status, reason, r.stderr)
	}
	gotCodes, readings := sendCalls(o)
	if strings.Join(gotCodes, ",") != strings.Join(codes, ",") {
		t.Errorf("send_email codes %q, want %q", gotCodes, codes)
	}
	for i, v := range readings {
		if i >= len(verdicts) {
			break
		}
		if v == nil || v.Verdict != verdicts[i] || v.Model != model {
			t.Errorf("send_email %d: verification %+v, want %s by %s", i, v, verdicts[i], model)
		}
	}
	last := verdicts[len(verdicts)-1]
	if o.Verification == nil || o.Verification.Verdict != last || o.Verification.Model != model {
		t.Fatalf("outcome verification %+v, want %s by %s", o.Verification, last, model)
	}
	switch last {
	case decision.VerifyError:
		if o.Verification.Error == "" || !strings.Contains(o.Detail, "could not be verified") {
			t.Errorf("a verifier error without its reason: verification %+v, detail %q", o.Verification, o.Detail)
		}
	case decision.VerifyPass:
		if len(o.Verification.Flagged) != 0 {
			t.Errorf("pass with flagged statements: %+v", o.Verification)
		}
	}
	for i, v := range readings {
		if v != nil && v.Verdict == decision.VerifyFlagged && !strings.Contains(o.FunctionCalls[len(o.FunctionCalls)-len(readings)+i].Error.Message, "młynek") {
			t.Errorf("the refusal does not quote the flagged statement: %s", o.FunctionCalls[len(o.FunctionCalls)-len(readings)+i].Error.Message)
		}
	}
	sent := sentReplies(t, r.outbox)
	drafts, err := filepath.Glob(filepath.Join(r.outbox, "drafts", "*.eml"))
	if err != nil {
		t.Fatal(err)
	}
	if (status == triage.StatusReplied) != (len(sent) == 1) || (status == triage.StatusDrafted) != (len(drafts) == 1) {
		t.Errorf("status %s but %d replies and %d drafts in the outbox", status, len(sent), len(drafts))
	}
	sent = append(sent, drafts...)
	for _, f := range sent {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "gratis") {
			t.Errorf("the flagged promise reached the customer: %s", f)
		}
	}
}

// TestVerifierOffline: with the offline model, a configured verifier is
// not asked (its server gets no request) and the lexicon alone decides;
// with a live model and no verifier configured, no reply carries a
// verification.
func TestVerifierOffline(t *testing.T) {
	noDefaultConfig(t)
	t.Run("offline model, verifier configured", func(t *testing.T) {
		ver := openaitest.New(t)
		t.Setenv("OPENAI_API_KEY", openaitest.APIKey)
		r := processVerified(t, "--offline", "--verify-provider", "openai", "--verify-base-url", ver.BaseURL(), "--verify-model", "gpt-verifier")
		if r.out.Status != triage.StatusReplied || r.out.Verification != nil {
			t.Errorf("status %s %s, verification %+v; want replied unverified\nstderr: %s", r.out.Status, r.out.Reason, r.out.Verification, r.stderr)
		}
		if n := len(ver.Requests()); n != 0 {
			t.Errorf("the verifier got %d requests with the offline model", n)
		}
		if !strings.Contains(r.stderr, "no verifier with the offline model") {
			t.Errorf("stderr does not say the verifier is off: %s", r.stderr)
		}
	})
	t.Run("live model, no verifier", func(t *testing.T) {
		main := geminitest.New(t, geminiMain(verifyPromise)...)
		t.Setenv("GEMINI_API_KEY", geminitest.APIKey)
		t.Setenv("GOOGLE_GEMINI_BASE_URL", main.URL())
		r := processVerified(t)
		// The lexicon alone misses the free grinder: what the verifier is for.
		if r.out.Status != triage.StatusReplied || r.out.Verification != nil {
			t.Errorf("status %s %s, verification %+v; want replied unverified", r.out.Status, r.out.Reason, r.out.Verification)
		}
		if _, readings := sendCalls(r.out); len(readings) != 1 || readings[0] != nil {
			t.Errorf("send_email readings %v, want one, unverified", readings)
		}
	})
}

// TestVerifierSettings: the verifier's settings are checked at start-up
// with messages naming them.
func TestVerifierSettings(t *testing.T) {
	noDefaultConfig(t)
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("GEMINI_API_KEY", geminitest.APIKey)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--verify-provider", "anthropic"}, `--verify-provider "anthropic": want gemini or openai`},
		{[]string{"--verify-model", "x"}, "need --verify-provider"},
		{[]string{"--verify-provider", "openai", "--verify-base-url", "http://127.0.0.1:1/v1"}, "--verify-provider openai needs --verify-model"},
		{[]string{"--verify-provider", "openai", "--verify-model", "gpt-x"}, "the verifier (openai, model gpt-x) has no credentials"},
		{[]string{"--verify-provider", "gemini", "--verify-base-url", "http://127.0.0.1:1/v1"}, "are for --verify-provider openai"},
		{[]string{"--verify-provider", "gemini", "--verify-timeout", "0s"}, "--verify-timeout"},
	} {
		dir := t.TempDir()
		var out, errb bytes.Buffer
		code := run(context.Background(), append(append([]string{"process", "--warranty-csv", "../../examples/warranty.csv",
			"--tickets-db", filepath.Join(dir, "t.db"), "--outbox", filepath.Join(dir, "o")}, tt.args...), "../../examples/inbox/01-valid-warranty-pl.eml"),
			strings.NewReader(""), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, errb.String(), tt.want)
		}
	}
}

// TestVerifierTrace: each verifier reading is a verify_reply span inside
// its send_email call's span, with the verdict and counts, holding the
// verifier model's chat span.
func TestVerifierTrace(t *testing.T) {
	noDefaultConfig(t)
	rec := recordSpans(t)
	flagged := decision.Statement{Quote: verifyPromiseWords, Kind: decision.KindPromise, Reason: "not offered"}
	main := openaitest.New(t, openAIMain(verifyPromise, verifyTruthful)...)
	ver := geminitest.New(t, geminitest.One(geminitest.Text(verifyAnswer(flagged))), geminitest.One(geminitest.Text(verifyAnswer())))
	t.Setenv("OPENAI_API_KEY", openaitest.APIKey)
	t.Setenv("GEMINI_API_KEY", geminitest.APIKey)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", ver.URL())
	r := processVerified(t, "--provider", "openai", "--base-url", main.BaseURL(), "--model", "gpt-test",
		"--verify-provider", "gemini", "--verify-model", "gemini-verifier")
	if r.out.Status != triage.StatusReplied {
		t.Fatalf("status %s %s: %s", r.out.Status, r.out.Reason, r.out.Detail)
	}
	spans := rec.Ended()
	byID := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byID[s.SpanContext().SpanID().String()] = s
	}
	var got []string
	for _, s := range spans {
		if s.Name() != trace.VerifySpanName {
			continue
		}
		parent := byID[s.Parent().SpanID().String()]
		if parent == nil || parent.Name() != "execute_tool send_email" {
			t.Errorf("verify span's parent is %v, want the send_email call", parent)
		}
		chats := 0
		for _, c := range spans {
			if c.Parent().SpanID() == s.SpanContext().SpanID() && c.Name() == "chat gemini-verifier" {
				chats++
			}
		}
		got = append(got, fmt.Sprintf("%s %s %s/%s chats=%d", spanAttr(s, "triage.verify.model"), spanAttr(s, "triage.verify.verdict"),
			spanAttr(s, "triage.verify.flagged"), spanAttr(s, "triage.verify.ignored"), chats))
	}
	want := []string{"gemini-verifier flagged 1/0 chats=1", "gemini-verifier pass 0/0 chats=1"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("verify spans %q, want %q", got, want)
	}
}

// process's summary names the verifier's verdict.
func TestVerifierSummaryLine(t *testing.T) {
	out := processor.Outcome{Verification: &decision.Verification{Model: "gpt-verifier", Verdict: decision.VerifyPass,
		Ignored: []decision.Statement{{Quote: "x", Kind: decision.KindFact}}}}
	if got, want := decisionLine(out), "    verifier gpt-verifier: pass (1 misquoted, ignored)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// watch reads the verifier from the configuration's verify: section, and
// --check reports a wrong one naming its key.
func TestVerifierWatchConfig(t *testing.T) {
	noDefaultConfig(t)
	for _, tt := range []struct {
		verify string
		code   int
		want   string
	}{
		{"verify:\n  provider: openai\n  base_url: http://127.0.0.1:1/v1\n", 2, "--verify-provider openai needs --verify-model (verify.model)"},
		{"verify:\n  provider: mistral\n", 2, "verify.provider"},
		{"verify:\n  provider: gemini\n  model: gemini-verifier\n  timeout: 5s\n", 0, ""},
	} {
		cfg := watchConfig(t, t.TempDir(), "  offline: true\n"+tt.verify)
		code, stdout, stderr := runArgs(t, "watch", "--check", "--config", cfg)
		if code != tt.code || !strings.Contains(stderr+stdout, tt.want) {
			t.Errorf("%q: exit %d, want %d and %q\nstdout: %s\nstderr: %s", tt.verify, code, tt.code, tt.want, stdout, stderr)
		}
	}
}
