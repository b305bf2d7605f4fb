package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// peakCost runs `triage process` over files like peakRSS and returns the
// child's peak RSS in bytes and its CPU time (user + system) in ms.
func peakCost(b *testing.B, bin, dir string, files ...string) (rss int64, cpuMS int64) {
	b.Helper()
	args := append([]string{bin, "process", "--offline", "--json",
		"--warranty-csv", "warranty.csv", "--tickets-db", "tickets.db", "--outbox", "outbox"}, files...)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = []string{rssRunnerEnv + "=1", "PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("rss runner: %v\n%s", err, stderr.String())
	}
	var kib int64
	var code int
	if _, err := fmt.Sscanf(stdout.String(), "maxrss_kib=%d exit=%d cpu_ms=%d", &kib, &code, &cpuMS); err != nil {
		b.Fatalf("rss runner said %q: %v\n%s", stdout.String(), err, stderr.String())
	}
	if code != 0 && code != 1 {
		b.Fatalf("triage process exited %d:\n%s", code, stderr.String())
	}
	return kib * 1024, cpuMS
}

// worstTextEmail is the costliest email of text we can build under the
// default size limit (25 MB): 24 text/plain parts of 1 MiB each, full of
// words, serial-like tokens and detection keywords.
func worstTextEmail() []byte {
	var msg strings.Builder
	msg.WriteString("From: Anna <anna@customer.example>\r\nTo: serwis@example.com\r\nSubject: Reklamacja SN-48213-PL\r\n" +
		"Message-ID: <bench-text@customer.example>\r\nDate: Mon, 16 Nov 2026 09:12:44 +0100\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n")
	line := "Dzien dobry, moj ekspres SN-48213-PL nie grzeje, gwarancja reklamacja naprawa AB12345678 prosze o pomoc.\r\n"
	for p := 0; p < 24; p++ {
		msg.WriteString("--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n")
		for n := 0; n < 1<<20; n += len(line) {
			msg.WriteString(line)
		}
	}
	msg.WriteString("--b1--\r\n")
	return []byte(msg.String())
}

// BenchmarkProcessWorstText: one 25 MB email of 24 text parts of 1 MiB
// each through `triage process --offline`. Target: at most 2 s of CPU and
// 200 MiB of peak RSS.
func BenchmarkProcessWorstText(b *testing.B) {
	bin := builtTriage(b)
	dir := benchDir(b)
	raw := worstTextEmail()
	if err := os.WriteFile(filepath.Join(dir, "big.eml"), raw, 0o644); err != nil {
		b.Fatal(err)
	}
	for range b.N {
		os.RemoveAll(filepath.Join(dir, "outbox"))
		os.Remove(filepath.Join(dir, "tickets.db"))
		peak, cpu := peakCost(b, bin, dir, "big.eml")
		b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
		b.ReportMetric(float64(cpu)/1000, "cpu-s")
		b.Logf("one email of %.1f MiB text: CPU %.2f s, peak RSS %.1f MiB (target <= 2 s, <= 200 MiB)",
			float64(len(raw))/(1<<20), float64(cpu)/1000, float64(peak)/(1<<20))
	}
}
