package geminitest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"
)

// TestScript: the real genai client gets the scripted answers in order, the
// server records what it sent, and a call past the script is an error of
// the test (recorded here instead of failing this one).
func TestScript(t *testing.T) {
	rec := &recorder{TB: t}
	f := New(rec, One(Text("Hello."), Call("c1", "check_warranty", map[string]any{"serial_number": "SN1"})),
		Step{Status: 503, Body: `{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`})
	c := f.Client()
	ctx := context.Background()
	resp, err := c.Models.GenerateContent(ctx, "gemini-x", genai.Text("Hi"), &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText("Be brief.", genai.RoleUser),
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text() != "Hello." || len(resp.FunctionCalls()) != 1 || resp.FunctionCalls()[0].Args["serial_number"] != "SN1" {
		t.Errorf("reply: text %q, calls %+v", resp.Text(), resp.FunctionCalls())
	}
	if u := resp.UsageMetadata; u == nil || u.PromptTokenCount != PromptTokens || u.TotalTokenCount != TotalTokens || resp.ModelVersion != ModelVersion {
		t.Errorf("usage %+v, model version %q", u, resp.ModelVersion)
	}
	if f.Left() != 1 {
		t.Errorf("Left = %d, want 1", f.Left())
	}
	_, err = c.Models.GenerateContent(ctx, "gemini-x", genai.Text("Again"), nil)
	var ae genai.APIError
	if !errors.As(err, &ae) || ae.Code != 503 {
		t.Errorf("second call: err %v, want the scripted 503", err)
	}

	reqs := f.Requests()
	if len(reqs) != 2 || reqs[0].Model != "gemini-x" || reqs[0].SystemInstruction == nil || reqs[0].SystemInstruction.Parts[0].Text != "Be brief." {
		t.Fatalf("requests %+v", reqs)
	}
	if diff := cmp.Diff([]string{`user: text "Hi"`}, Transcript(reqs[0].Contents)); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}
	if len(f.Bodies()) != 2 || !strings.Contains(string(f.Bodies()[1]), `"Again"`) {
		t.Errorf("bodies %q", f.Bodies())
	}

	if _, err := c.Models.GenerateContent(ctx, "gemini-x", genai.Text("One more"), nil); err == nil {
		t.Error("a call past the script succeeded")
	}
	if got := rec.errors(); len(got) != 1 || !strings.Contains(got[0], "script exhausted") {
		t.Errorf("test errors %q, want one naming the exhausted script", got)
	}
}

// recorder is a testing.TB whose Errorf is recorded, not reported.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.errs
}
