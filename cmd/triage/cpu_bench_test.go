package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
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
	files := make([]string, n)
	for i := range files {
		files[i] = fmt.Sprintf("%05d.eml", i)
		if err := os.WriteFile(filepath.Join(dir, files[i]), []byte(smallEmail(i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for range b.N {
		os.RemoveAll(filepath.Join(dir, "outbox"))
		os.Remove(filepath.Join(dir, "tickets.db"))
		args := append([]string{bin, "process", "--offline", "--json", "--concurrency", "4",
			"--warranty-csv", "warranty.csv", "--tickets-db", "tickets.db", "--outbox", "outbox"}, files...)
		cmd := exec.Command(os.Args[0], args...)
		cmd.Dir = dir
		cmd.Env = []string{rssRunnerEnv + "=1", "PATH=" + os.Getenv("PATH"), "HOME=" + dir}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			b.Fatalf("rss runner: %v\n%s", err, stderr.String())
		}
		var kib, cpuMS int64
		var code int
		if _, err := fmt.Sscanf(stdout.String(), "maxrss_kib=%d exit=%d cpu_ms=%d", &kib, &code, &cpuMS); err != nil || code != 0 {
			b.Fatalf("runner said %q (%v):\n%s", stdout.String(), err, stderr.String())
		}
		b.ReportMetric(float64(cpuMS)/n, "cpu-ms/email")
		b.Logf("%d emails: %d ms of CPU, %.2f ms per email (target <= 3)", n, cpuMS, float64(cpuMS)/n)
	}
}
