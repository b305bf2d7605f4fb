package processor_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage"

	"triage/internal/instructions"
	"triage/internal/language"
	"triage/internal/model"
	"triage/internal/processor"
	"triage/internal/prompt"
	"triage/internal/testkit/openaitest"
	"triage/internal/testkit/toolstest"
)

// openAIPipeline builds the whole pipeline (processor.Build) over an
// OpenAI-compatible stand-in, reading the attachment kinds inputs.
func openAIPipeline(t *testing.T, srv *openaitest.Server, inputs []string) *processor.Pipeline {
	t.Helper()
	dir := t.TempDir()
	set := testScenarios(t)
	w, tk, ob, ext := newBackends(t, dir, "SN-48213-PL,valid,2027-05-31,Ekspres <EX-1> & młynek\n")
	det, err := language.New(language.Config{Default: "pl"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := processor.Build(context.Background(), processor.Parts{
		Instructions: &instructions.Set{Scenarios: set, Tools: toolstest.Shipped(t)},
		Model: model.Options{Provider: model.ProviderOpenAI, BaseURL: srv.BaseURL(), Inputs: inputs,
			Getenv: func(k string) string {
				if k == "OPENAI_API_KEY" {
					return openaitest.APIKey
				}
				return ""
			}},
		ModelName: openaitest.Model,
		Warranty:  w, Tickets: tk, Sender: ob,
		From: "Serwis <serwis@example.com>", Address: "serwis@example.com", Domain: "example.com",
		Extractor: ext, Language: det,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// photoSteps answer a photo claim: the scenario and the warranty check
// with the serial read from the photo in the opening turn, the ticket, the
// reply.
func photoSteps() []openaitest.Step {
	return []openaitest.Step{
		openaitest.Calls(openaitest.Call{ID: "c0", Name: prompt.ChooseScenario, Args: map[string]any{"scenario": "valid-warranty", "reason": "photo of the plate"}},
			openaitest.Call{ID: "c1", Name: "check_warranty", Args: map[string]any{"serial_number": "SN-48213-PL"}}),
		openaitest.Calls(openaitest.Call{ID: "c2", Name: "create_ticket", Args: map[string]any{"serial_number": "SN-48213-PL", "customer_email": "anna@customer.example", "priority": "normal"}}),
		openaitest.Calls(openaitest.Call{ID: "c3", Name: "send_email", Args: map[string]any{"to": "anna@customer.example", "subject": "Re: Reklamacja ekspresu", "body": "Dzień dobry,\n\nodpowiedź.\n\nZespół serwisu gwarancyjnego"}}),
	}
}

// TestOpenAIAttachments: through an OpenAI-compatible endpoint a photo goes
// as an image_url data URL and a PDF as a file part, in the customer's
// message; an endpoint set to read images only is sent the photo, the PDF
// is recorded as not sent (model_cannot_read) and the email is answered
// from the text and the photo; one set to read none gets neither.
func TestOpenAIAttachments(t *testing.T) {
	pdf := []byte("%PDF-1.7\n1 0 obj <<>> endobj\n%%EOF\n")
	raw := photoEmail(part{"tabliczka.png", "image/png", png(100)}, part{"paragon.pdf", "application/pdf", pdf})
	for _, tt := range []struct {
		inputs     []string
		sent       []bool
		wantKinds  []string
		notSentPDF string
	}{
		{nil, []bool{true, true}, []string{"text", "image_url", "file"}, ""},
		{[]string{"image"}, []bool{true, false}, []string{"text", "image_url"}, processor.NotSentModel},
		{[]string{"none"}, []bool{false, false}, nil, processor.NotSentModel},
	} {
		t.Run(strings.Join(tt.inputs, ","), func(t *testing.T) {
			srv := openaitest.New(t, photoSteps()...)
			out := openAIPipeline(t, srv, tt.inputs).Process(context.Background(), processor.Input{Name: "photo.eml", Raw: raw})
			if out.Status != triage.StatusReplied {
				t.Fatalf("status %s (%s: %s), want replied", out.Status, out.Reason, out.Detail)
			}
			var sent []bool
			for _, a := range out.Attachments {
				sent = append(sent, a.Sent)
			}
			if diff := cmp.Diff(tt.sent, sent); diff != "" || out.Attachments[1].NotSent != tt.notSentPDF {
				t.Errorf("sent (-want +got):\n%s; the PDF's not_sent %q, want %q", diff, out.Attachments[1].NotSent, tt.notSentPDF)
			}
			// The customer message of the loop's first request under the
			// chosen scenario (after the opening turn's).
			reqs := srv.Requests()
			var kinds []string
			var user map[string]any
			for _, m := range reqs[1].Messages {
				if m["role"] == "user" {
					user = m
					break
				}
			}
			if parts, ok := user["content"].([]any); ok {
				for _, p := range parts {
					pm, _ := p.(map[string]any)
					kinds = append(kinds, pm["type"].(string))
					switch pm["type"] {
					case "image_url":
						if u, _ := pm["image_url"].(map[string]any)["url"].(string); !strings.HasPrefix(u, "data:image/png;base64,") {
							t.Errorf("image_url %.40q, want a PNG data URL", u)
						}
					case "file":
						if u, _ := pm["file"].(map[string]any)["file_data"].(string); !strings.HasPrefix(u, "data:application/pdf;base64,") {
							t.Errorf("file_data %.40q, want a PDF data URL", u)
						}
					}
				}
			} else if _, ok := user["content"].(string); !ok {
				t.Fatalf("customer message content %T", user["content"])
			}
			if diff := cmp.Diff(tt.wantKinds, kinds); diff != "" {
				t.Errorf("content parts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOpenAIToolResultsAsWritten: a tool result holding <, > and & (the
// registry's product name) reaches the endpoint as written, not as \u003c
// escapes.
func TestOpenAIToolResultsAsWritten(t *testing.T) {
	raw := photoEmail(part{"tabliczka.png", "image/png", png(100)})
	srv := openaitest.New(t, photoSteps()...)
	out := openAIPipeline(t, srv, nil).Process(context.Background(), processor.Input{Name: "amp.eml", Raw: raw})
	if out.Status != triage.StatusReplied {
		t.Fatalf("status %s (%s: %s), want replied", out.Status, out.Reason, out.Detail)
	}
	bodies := srv.Bodies()
	last := string(bodies[len(bodies)-1])
	if strings.Contains(last, `\u003c`) || strings.Contains(last, `\u0026`) || !strings.Contains(last, "Ekspres <EX-1> & młynek") {
		t.Errorf("request escapes < and &: %s", last)
	}
}

// TestCutTurnInDetail: a turn cut at the output token limit (finish_reason
// length, the call's arguments half written) fails the email with a detail
// that says so and names the endpoint's finish reason.
func TestCutTurnInDetail(t *testing.T) {
	cut := openaitest.Cut("c1", "check_warranty", `{"serial_number":"SN-48`)
	srv := openaitest.New(t, photoSteps()[0], cut, cut)
	out := openAIPipeline(t, srv, nil).Process(context.Background(), processor.Input{Name: "cut.eml", Raw: photoEmail()})
	if out.Status != triage.StatusFailed || !strings.Contains(out.Detail, "output token limit") || !strings.Contains(out.Detail, "finish_reason length") {
		t.Errorf("%s/%s: detail %q, want it to say the turn was cut at the output token limit (finish_reason length)", out.Status, out.Reason, out.Detail)
	}
}
