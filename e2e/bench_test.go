package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	embedded "triage/instructions"
	"triage/internal/instructions"
	"triage/internal/model"
)

// logTime is the time of the binary's first JSON log line with message msg.
func (w *world) logTime(b *testing.B, msg string) time.Time {
	for _, line := range strings.Split(w.logs(), "\n") {
		var rec struct {
			Time time.Time `json:"time"`
			Msg  string    `json:"msg"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == msg {
			return rec.Time
		}
	}
	b.Fatalf("no %q in the log:\n%s", msg, tail(w.logs(), 3000))
	return time.Time{}
}

// BenchmarkWatchBacklog: how fast `triage watch --once` (the real binary
// and pipeline) drains a backlog when every model call takes a fixed
// latency L: the offline stand-in, reached as "Gemini" through the real
// genai SDK (GEMINI_API_KEY + GOOGLE_GEMINI_BASE_URL). It reports
// messages/s from the start of the watch (pipeline built) to its end, the
// ceiling c/(k·L) (k: model calls per message, counted at
// the stand-in) and their ratio (target >= 0.9). Run with
//
//	go test -run '^$' -bench WatchBacklog -benchtime 1x ./e2e
//
// TRIAGE_BENCH_LATENCY (default 600ms) and
// TRIAGE_BENCH_MESSAGES (default 12 per worker) change the load.
func BenchmarkWatchBacklog(b *testing.B) {
	lat := benchLatency(b, 600*time.Millisecond)
	for _, c := range []int{1, 4, 8} {
		b.Run(fmt.Sprintf("concurrency=%d", c), func(b *testing.B) {
			n := benchMessages(b, 12*c)
			for range b.N {
				srv, err := model.StartOffline(model.OfflineOptions{Latency: lat})
				if err != nil {
					b.Fatal(err)
				}
				w := newWorld(b, fmt.Sprintf("concurrency: %d\n", c))
				// The stand-in plays Gemini here, so the pipeline is not
				// forced offline.
				w.online()
				for i := range n {
					w.deliver(i)
				}
				cmd := w.command("watch", "--config", w.config, "--once")
				cmd.Env = append(cmd.Env, "GEMINI_API_KEY=bench", "GOOGLE_GEMINI_BASE_URL="+srv.URL())
				if err := cmd.Run(); err != nil {
					b.Fatalf("watch --once: %v\n%s", err, tail(w.logs(), 3000))
				}
				srv.Close()
				// From "watch starting" (the pipeline is built) to "watch
				// done": connect, the pass, logout.
				elapsed := w.logTime(b, "watch done").Sub(w.logTime(b, "watch starting"))
				if got := len(w.sink.Messages()); got == 0 {
					b.Fatalf("no replies; logs:\n%s", tail(w.logs(), 3000))
				}
				k := float64(srv.Requests()) / float64(n)
				rate := float64(n) / elapsed.Seconds()
				ceiling := float64(c) / (k * lat.Seconds())
				b.ReportMetric(rate, "msgs/s")
				b.ReportMetric(ceiling, "ceiling-msgs/s")
				b.ReportMetric(rate/ceiling, "ratio")
				b.Logf("concurrency %d, L=%s, %d messages, k=%.2f model calls/message, %d replies, %d connections to the model: %.2f msgs/s in %s; ceiling c/(k·L) = %.2f; ratio %.2f (target >= 0.9)",
					c, lat, n, k, len(w.sink.Messages()), srv.Connections(), rate, elapsed.Round(time.Millisecond), ceiling, rate/ceiling)
			}
		})
	}
}

// benchLatency is the stand-in model's latency of a backlog benchmark:
// TRIAGE_BENCH_LATENCY, else def.
func benchLatency(b *testing.B, def time.Duration) time.Duration {
	v := os.Getenv("TRIAGE_BENCH_LATENCY")
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		b.Fatalf("TRIAGE_BENCH_LATENCY: %v", err)
	}
	return d
}

// benchMessages is how many messages a benchmark runs over:
// TRIAGE_BENCH_MESSAGES, or def.
func benchMessages(b *testing.B, def int) int {
	v := os.Getenv("TRIAGE_BENCH_MESSAGES")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("TRIAGE_BENCH_MESSAGES=%q: want a count of at least 1", v)
	}
	return n
}

// benchBinary is the triage a benchmark runs: TRIAGE_BENCH_BINARY (another
// build, so two builds can be measured in turn), or this tree's as `make
// build` links it (shippedBinary).
func benchBinary(b *testing.B) string {
	if bin := os.Getenv("TRIAGE_BENCH_BINARY"); bin != "" {
		return bin
	}
	return shippedBinary(b)
}

// scenarioModel starts the offline model that knows the built-in
// scenarios, served by the benchmark's process as triage asks Gemini, and
// returns the scenarios with it; the model stops when b ends.
func scenarioModel(b *testing.B) (*instructions.Scenarios, *model.OfflineServer) {
	b.Helper()
	scs, err := instructions.LoadScenarios(embedded.FS, nil)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := model.StartOffline(model.OfflineOptions{Scenarios: scs})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	return scs, srv
}
