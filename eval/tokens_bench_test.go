package eval

import (
	"context"
	"testing"

	"triage/internal/model"
	"triage/internal/testkit/tokentest"
)

// BenchmarkTokens runs the eval suite (eval/cases) on the offline model
// once per iteration and reports, per scenario, the model calls and the
// prompt tokens per email, split by part and by turn, and the share of the
// stable prefix (system instruction, scenario, tool declarations) a cache
// could serve. Tokens are estimated (runes/4); with
// TRIAGE_BENCH_COUNT_TOKENS=live and GEMINI_API_KEY they are counted by
// Gemini's countTokens endpoint (the requests stay the offline run's).
//
//	go test -run '^$' -bench Tokens -benchtime 1x ./eval
func BenchmarkTokens(b *testing.B) {
	set, cases := shippedSuite(b)
	rec := &tokentest.Recorder{Next: model.Transport(1)}
	r := newTestRunner(b, set, Config{Backends: manualsBackend(b), Transport: rec})
	var bodies [][]byte
	var outputs []int
	for range b.N {
		rec.Bodies()
		rec.Outputs()
		rep := r.Run(context.Background(), cases)
		if rep.Passed != rep.Total {
			b.Fatalf("suite: %d/%d passed", rep.Passed, rep.Total)
		}
		bodies, outputs = rec.Bodies(), rec.Outputs()
	}
	tokentest.MeasureAndReport(b, set, bodies, outputs)
}
