package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	embedded "triage/instructions"
	"triage/internal/instructions"
	"triage/internal/model"
)

// BenchmarkProcessThroughput: how close one `triage process` run over a
// batch of emails comes to the ceiling c/(k·L) when every model call takes
// L: the offline model served by this benchmark's process, reached as
// "Gemini" through the real genai SDK, c workers (--concurrency), k the
// model calls per email counted at the stand-in. It reports emails/s over
// the run's whole wall time (its start-up included), the ceiling and their
// ratio (target: >= 0.9 at c = 16, >= 0.85 at c = 64). Run with
//
//	go test -run '^$' -bench ProcessThroughput -benchtime 1x -count 3 ./e2e
//
// TRIAGE_BENCH_LATENCY (default 300ms) and TRIAGE_BENCH_MESSAGES (default
// 2000) change the load; TRIAGE_BENCH_BINARY names a built triage to
// measure instead of this tree's (runs of two builds, interleaved, compare
// them on a busy machine).
func BenchmarkProcessThroughput(b *testing.B) {
	lat := benchLatency(b, 300*time.Millisecond)
	n := benchMessages(b, 2000)
	bin := benchBinary(b)
	dir := benchDir(b)
	files := smallEmails(b, dir, n)
	scs, err := instructions.LoadScenarios(embedded.FS, nil)
	if err != nil {
		b.Fatal(err)
	}
	runs := 0
	for _, c := range []int{16, 64} {
		b.Run(fmt.Sprintf("concurrency=%d", c), func(b *testing.B) {
			for range b.N {
				srv, err := model.StartOffline(model.OfflineOptions{Scenarios: scs, Latency: lat})
				if err != nil {
					b.Fatal(err)
				}
				runs++
				state := filepath.Join(dir, fmt.Sprintf("run-%d", runs))
				args := append([]string{"process", "--json", "--concurrency", fmt.Sprint(c), "--warranty-csv", "warranty.csv",
					"--tickets-db", filepath.Join(state, "tickets.db"), "--outbox", filepath.Join(state, "outbox")}, files...)
				cmd := exec.Command(bin, args...)
				cmd.Dir = dir
				cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GEMINI_API_KEY=bench", "GOOGLE_GEMINI_BASE_URL=" + srv.URL()}
				var stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = nil, &stderr
				if err := os.MkdirAll(state, 0o755); err != nil {
					b.Fatal(err)
				}
				self := selfCPU(b)
				start := time.Now()
				if err := cmd.Run(); err != nil {
					b.Fatalf("triage process: %v\n%s", err, tail(stderr.String(), 3000))
				}
				elapsed := time.Since(start)
				self = selfCPU(b) - self
				srv.Close()
				k := float64(srv.Requests()) / float64(n)
				rate := float64(n) / elapsed.Seconds()
				ceiling := float64(c) / (k * lat.Seconds())
				b.ReportMetric(rate, "emails/s")
				b.ReportMetric(ceiling, "ceiling/s")
				b.ReportMetric(rate/ceiling, "ratio")
				// The run's CPU time beside its wall time: on a machine whose
				// cores are busy the workers wait for a core, not the model.
				cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(n), "cpu-ms/email")
				// The stand-in serves the model calls from this process: on a
				// busy machine its share of the cores bounds the run too.
				b.ReportMetric(float64(self.Microseconds())/1000/float64(n), "standin-cpu-ms/email")
				b.Logf("c=%d L=%s: %d emails in %s, k=%.2f model calls an email: %.2f emails/s, ceiling %.2f, ratio %.2f; %s of CPU (%.1f cores), the stand-in %s (%.1f cores); load average %s",
					c, lat, n, elapsed.Round(time.Millisecond), k, rate, ceiling, rate/ceiling, cpu.Round(time.Millisecond), cpu.Seconds()/elapsed.Seconds(),
					self.Round(time.Millisecond), self.Seconds()/elapsed.Seconds(), loadAverage())
			}
		})
	}
}

// selfCPU is the user and system CPU time this process (the benchmark and
// the model stand-in it serves) has used.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadAverage is the machine's load average over 1, 5 and 15 minutes
// ("?" where /proc/loadavg cannot be read).
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(raw)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "?"
}
