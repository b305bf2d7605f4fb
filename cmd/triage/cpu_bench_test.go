package main

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkProcessCPUPerEmail: CPU time (user + system, of the triage
// process, as getrusage reports it) per email of one `triage process` run
// over 1,000 emails with the built-in offline model, which answers at once
// (zero model latency; its own work is in the figure, a real model's would
// not be). Target: at most 3 ms per email.
//
//	go test -run '^$' -bench ProcessCPUPerEmail -benchtime 3x ./cmd/triage
func BenchmarkProcessCPUPerEmail(b *testing.B) {
	const n = 1000
	bin := builtTriage(b)
	dir := benchDir(b)
	files := smallEmails(b, dir, n)
	for range b.N {
		os.RemoveAll(filepath.Join(dir, "outbox"))
		os.Remove(filepath.Join(dir, "tickets.db"))
		_, cpuMS, code := measureProcess(b, bin, dir, []string{"--concurrency", "4"}, files...)
		if code != 0 {
			b.Fatalf("triage process exited %d", code)
		}
		b.ReportMetric(float64(cpuMS)/n, "cpu-ms/email")
		b.Logf("%d emails: %d ms of CPU, %.2f ms per email (target <= 3)", n, cpuMS, float64(cpuMS)/n)
	}
}
