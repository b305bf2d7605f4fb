package processor_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/genai"

	"triage"
	"triage/internal/agent"
	"triage/internal/message"
	"triage/internal/processor"
	"triage/internal/replies"
)

// gated holds every model call until open is closed, telling entered of
// each as it arrives.
type gated struct {
	agent.Model
	entered chan struct{}
	open    chan struct{}
}

func (g *gated) GenerateContent(ctx context.Context, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	g.entered <- struct{}{}
	select {
	case <-g.open:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.Model.GenerateContent(ctx, model, contents, cfg)
}

// TestTwoRunsClaimOneEmail: two runs sharing an outbox (overlapping triage
// process runs, wired as cmd/triage wires them) get the same email while
// the first is still asking the model. The second waits for the first's
// claim, then finds its reply: it asks the model nothing and writes
// nothing.
func TestTwoRunsClaimOneEmail(t *testing.T) {
	dir := t.TempDir()
	script := &scripted{}
	m := &gated{Model: script, entered: make(chan struct{}, 64), open: make(chan struct{})}
	wire := func(_ *agent.Config, pc *processor.Config) {
		ob, err := replies.NewOutbox(filepath.Join(dir, "outbox"))
		if err != nil {
			t.Fatal(err)
		}
		pc.Claim, pc.Answered = ob.Claim, ob.Answered("example.com")
	}
	runs := []*env{newEnvAt(t, dir, m, defaultStaff, nil, wire), newEnvAt(t, dir, m, defaultStaff, nil, wire)}
	in := processor.Input{Name: "a.eml", Raw: eml("anna@example.pl", "Reklamacja", "Ekspres SN-48213-PL przecieka, proszę o naprawę.")}
	outs := make([]processor.Outcome, 2)
	var wg sync.WaitGroup
	wg.Go(func() { outs[0] = runs[0].proc.Process(context.Background(), in) })
	<-m.entered // the first run is asking the model
	wg.Go(func() { outs[1] = runs[1].proc.Process(context.Background(), in) })
	select {
	case <-m.entered:
		t.Error("the second run asked the model while the first was answering the same email")
	case <-time.After(300 * time.Millisecond):
	}
	close(m.open)
	wg.Wait()

	if outs[0].Status != triage.StatusReplied || outs[0].Reply == nil || outs[0].Reply.Existing {
		t.Fatalf("first run: %s %s %s, reply %+v", outs[0].Status, outs[0].Reason, outs[0].Detail, outs[0].Reply)
	}
	if outs[1].Status != triage.StatusReplied || outs[1].Reply == nil || !outs[1].Reply.Existing || outs[1].ModelCalls != 0 {
		t.Errorf("second run: %s %s %s, reply %+v, %d model calls; want the first run's reply, existing, and no model call",
			outs[1].Status, outs[1].Reason, outs[1].Detail, outs[1].Reply, outs[1].ModelCalls)
	}
	if n := script.calls.Load(); n != int64(outs[0].ModelCalls) {
		t.Errorf("the model answered %d calls; the first run made %d", n, outs[0].ModelCalls)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "outbox", "*.eml")); len(files) != 1 {
		t.Errorf("outbox files %v, want the one reply", files)
	}
}

// TestClaimOutlivingTheDeadline: a claim another run holds past this
// email's deadline fails the email, left for a person, before the model.
func TestClaimOutlivingTheDeadline(t *testing.T) {
	dir := t.TempDir()
	ob, err := replies.NewOutbox(filepath.Join(dir, "outbox"))
	if err != nil {
		t.Fatal(err)
	}
	script := &scripted{}
	e := newEnvAt(t, dir, script, defaultStaff, nil, func(_ *agent.Config, pc *processor.Config) {
		pc.Claim = ob.Claim
		pc.Bounds.Deadline = 200 * time.Millisecond
	})
	in := processor.Input{Name: "a.eml", Raw: eml("anna@example.pl", "Reklamacja", "Ekspres SN-48213-PL przecieka, proszę o naprawę.")}
	other, err := replies.NewOutbox(filepath.Join(dir, "outbox")) // another run
	if err != nil {
		t.Fatal(err)
	}
	msg, err := message.Parse(in.Raw)
	if err != nil {
		t.Fatal(err)
	}
	release, err := other.Claim(context.Background(), triage.KeyOf(msg, in.Raw))
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	out := e.proc.Process(context.Background(), in)
	if out.Status != triage.StatusFailed || out.Reason != triage.ReasonHistoryError || script.calls.Load() != 0 {
		t.Errorf("outcome %s %s %q after %d model calls; want failed %s before the model", out.Status, out.Reason, out.Detail, script.calls.Load(), triage.ReasonHistoryError)
	}
}
