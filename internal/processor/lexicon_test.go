package processor_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"triage"
	"triage/internal/agent"
	"triage/internal/decision"
	"triage/internal/dispatcher"
	"triage/internal/guard"
	"triage/internal/instructions"
	"triage/internal/processor"
	"triage/internal/prompt"
	"triage/internal/testkit/toolstest"
)

// promiser checks the warranty and then sends the replies it was given,
// one per send_email attempt, each with the commitments it declares: a
// model whose words may promise what its declaration does not.
type promiser struct{ replies []promise }

type promise struct {
	body        string
	commitments []any
}

func (p *promiser) GenerateContent(ctx context.Context, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	f, err := prompt.ParseFacts(contents[0].Parts[0].Text)
	if err != nil {
		return nil, err
	}
	checked, sends := false, 0
	for _, c := range contents {
		for _, part := range c.Parts {
			if r := part.FunctionResponse; r != nil {
				checked = checked || r.Name == "check_warranty"
				if r.Name == "send_email" {
					sends++
				}
			}
		}
	}
	call := func(name string, args map[string]any) *genai.GenerateContentResponse {
		return resp(&genai.Part{FunctionCall: &genai.FunctionCall{ID: "c-" + name, Name: name, Args: args}})
	}
	switch {
	case !checked:
		return call("check_warranty", map[string]any{"serial_number": f.SerialNumbers[0]}), nil
	case sends < len(p.replies):
		r := p.replies[sends]
		return call("send_email", map[string]any{"to": f.ReplyTo, "subject": "Re: " + f.Subject, "body": r.body,
			"decision": "guarantee", "commitments": r.commitments}), nil
	default:
		return resp(&genai.Part{Text: "I could not send the reply."}), nil
	}
}

// lexiconEnv is a pipeline over the shipped instructions, policy and
// lexicon, where SN-48213-PL's guarantee runs until 2027-05-31.
func lexiconEnv(t *testing.T, m agent.Model) (*processor.Processor, string) {
	t.Helper()
	dir := t.TempDir()
	scs := testScenarios(t)
	pol, err := instructions.LoadPolicy(nil)
	if err != nil {
		t.Fatal(err)
	}
	lex, err := instructions.LoadLexicon(nil)
	if err != nil {
		t.Fatal(err)
	}
	w, tk, ob, ext := newBackends(t, dir, "SN-48213-PL,valid,2027-05-31,Ekspres\n")
	outbox := filepath.Join(dir, "outbox")
	p, err := processor.Assemble(agent.Config{Model: m, MaxRetries: -1},
		dispatcher.Config{Tools: toolstest.Shipped(t), StaffAddresses: defaultStaff, Lexicon: lex,
			Builtins: dispatcher.Routes(w, pol, tk, ob, "Serwis <serwis@example.com>", "example.com", dispatcher.Notices{})},
		processor.Config{Scenarios: scs, Extractor: ext, ModelName: "scripted", Tickets: tk, History: ob,
			Guard: guard.Config{OwnAddresses: []string{"serwis@example.com"}}})
	if err != nil {
		t.Fatal(err)
	}
	return p, outbox
}

// TestLexiconRewrite: a reply whose words promise a replacement it does
// not declare is refused (commitment_not_allowed, naming the phrase and
// what the decision allows); the model rewrites it, declaring the
// replacement the guarantee offers, and the reply is sent with it. A model
// that repeats the undeclared promise leaves the email for a person.
func TestLexiconRewrite(t *testing.T) {
	const email = "Dzień dobry, mój ekspres SN-48213-PL nie działa. Proszę o wymianę."
	undeclared := promise{"Dzień dobry,\n\ngwarancja urządzenia SN-48213-PL jest ważna. Wymienimy ekspres na nowy.", []any{"none"}}
	declared := promise{undeclared.body, []any{"replacement"}}
	for _, tt := range []struct {
		name    string
		replies []promise
		status  triage.Status
		calls   []string
	}{
		{"rewritten", []promise{undeclared, declared}, triage.StatusReplied,
			[]string{"check_warranty ok", "send_email blocked:commitment_not_allowed", "send_email ok"}},
		{"repeated", []promise{undeclared, undeclared}, triage.StatusFailed,
			[]string{"check_warranty ok", "send_email blocked:commitment_not_allowed", "send_email blocked:commitment_not_allowed"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, outbox := lexiconEnv(t, &promiser{replies: tt.replies})
			out := p.Process(context.Background(), processor.Input{Name: "in.eml", Raw: eml("Anna <anna@example.pl>", "Reklamacja", email)})
			got := summarize(out)
			if got.Status != tt.status || !cmp.Equal(got.Calls, tt.calls) {
				t.Fatalf("status %s calls %v, want %s %v; detail: %s", got.Status, got.Calls, tt.status, tt.calls, out.Detail)
			}
			refusal := out.FunctionCalls[len(out.FunctionCalls)-len(tt.calls)+1].Error.Message // after the prefetched look-up
			for _, want := range []string{`"wymienimy"`, "replacement", "(none)", "the decision allows repair, replacement"} {
				if !strings.Contains(refusal, want) {
					t.Errorf("refusal %q does not say %q", refusal, want)
				}
			}
			sent, _ := os.ReadDir(outbox)
			if tt.status != triage.StatusReplied {
				if out.Reason != triage.ReasonCommitmentNotAllowed {
					t.Errorf("reason %s", out.Reason)
				}
				return
			}
			if !slices.Equal(out.Commitments, []decision.Commitment{decision.CommitReplacement}) || len(sent) == 0 {
				t.Errorf("commitments %v, %d sent", out.Commitments, len(sent))
			}
		})
	}
}
