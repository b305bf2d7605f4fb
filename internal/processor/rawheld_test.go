package processor_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"weak"

	"google.golang.org/genai"

	"triage"
	"triage/internal/agent"
	"triage/internal/processor"
)

// collecting runs the garbage collector at every model call and tells
// whether the email's raw bytes were still held then.
type collecting struct {
	agent.Model
	raw  weak.Pointer[byte]
	held []bool
}

func (c *collecting) GenerateContent(ctx context.Context, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	runtime.GC()
	runtime.GC()
	c.held = append(c.held, c.raw.Value() != nil)
	return c.Model.GenerateContent(ctx, model, contents, cfg)
}

// A message of megabytes is not held while the model is asked: nothing
// reads the raw bytes once the attachments the model is sent are taken
// from them.
func TestRawBytesLetGoBeforeTheModel(t *testing.T) {
	m := &collecting{Model: &scripted{}}
	e := newEnv(t, m)
	out := processLettingGo(e.proc, m)
	if out.Status != triage.StatusReplied {
		t.Fatalf("status %s (%s: %s), want replied", out.Status, out.Reason, out.Detail)
	}
	if len(m.held) == 0 {
		t.Fatal("the model was never called")
	}
	for i, held := range m.held {
		if held {
			t.Errorf("model call %d: the message's raw bytes were still held", i+1)
		}
	}
}

// processLettingGo processes a 4 MB message, keeping only a weak pointer
// to its bytes in m.
func processLettingGo(p *processor.Processor, m *collecting) processor.Outcome {
	raw := eml("Jan Kowalski <jan@example.pl>", "Reklamacja SN-48213-PL",
		"Mój ekspres SN-48213-PL nie grzeje.\n"+strings.Repeat("Szczegóły usterki w kolejnych linijkach. ", 100_000))
	m.raw = weak.Make(&raw[0])
	return p.Process(context.Background(), processor.Input{Name: "big.eml", Raw: raw})
}
