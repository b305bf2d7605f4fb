package e2e

import (
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"triage/internal/model"
	"triage/internal/testkit/tokentest"
)

// BenchmarkTokensSampleInbox runs `triage process` over the sample inbox
// (examples/inbox, then its follow-ups, as make run does) against the
// offline model served by the benchmark, as triage asks Gemini (through
// the genai SDK), and reports per scenario the model calls and the prompt
// tokens per email, split by part and by turn, and the share of the
// stable prefix a cache could serve (see tokentest.Report). Tokens are
// estimated (runes/4); TRIAGE_BENCH_COUNT_TOKENS=live with GEMINI_API_KEY
// counts them with Gemini's countTokens endpoint.
//
//	go test -run '^$' -bench TokensSampleInbox -benchtime 1x ./e2e
func BenchmarkTokensSampleInbox(b *testing.B) {
	bin := triageBinary(b)
	scs, srv := scenarioModel(b)
	target, err := url.Parse(srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	rec := &tokentest.Recorder{Next: model.Transport(1)}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = rec
	front := httptest.NewServer(proxy)
	defer front.Close()

	inbox, err := filepath.Glob("../examples/inbox/*.eml")
	if err != nil || len(inbox) == 0 {
		b.Fatalf("sample inbox: %v (%d files)", err, len(inbox))
	}
	followUps, err := filepath.Glob("../examples/inbox/follow-ups/*.eml")
	if err != nil {
		b.Fatal(err)
	}
	var bodies [][]byte
	var outputs []int
	for range b.N {
		dir := b.TempDir()
		rec.Bodies()
		rec.Outputs()
		for _, files := range [][]string{inbox, followUps} {
			args := append([]string{"process", "--warranty-csv", "../examples/warranty.csv", "--tickets-db", filepath.Join(dir, "tickets.db"),
				"--outbox", filepath.Join(dir, "outbox"), "--staff", "kierownik@example.com", "--concurrency", "1"}, files...)
			cmd := exec.Command(bin, args...)
			cmd.Env = append(os.Environ(), "GEMINI_API_KEY=bench", "GOOGLE_GEMINI_BASE_URL="+front.URL)
			// Exit status 1 says some email was failed (the sample inbox
			// has such emails); 2 and above, a broken run.
			if out, err := cmd.CombinedOutput(); err != nil {
				if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
					b.Fatalf("triage process: %v\n%s", err, out)
				}
			}
		}
		bodies, outputs = rec.Bodies(), rec.Outputs()
	}
	tokentest.MeasureAndReport(b, scs, bodies, outputs)
}
