package e2e

import (
	"fmt"
	"testing"
)

// BenchmarkProcessCPUPerEmail: CPU time (user + system, of the triage
// process, as getrusage reports it) per email of one `triage process` run
// over 1,000 emails at zero model latency, less the CPU of a run over one
// email (start-up: flags, instructions, the language models). Target: at
// most 3 ms per email. User and system time are reported apart too: the
// kernel's share varies with the file system's state from run to run.
//
// It is measured twice. model=in-process is the run as a user starts it,
// with --offline: the built-in offline model then answers from inside the
// measured process, so its own work (reading each request, writing each
// answer) is in the figure. model=apart is the same run asking the offline
// model served by this benchmark's process, as triage asks Gemini: what is
// left is triage's own CPU, the genai client's included.
//
//	go test -run '^$' -bench ProcessCPUPerEmail -benchtime 3x ./e2e
func BenchmarkProcessCPUPerEmail(b *testing.B) {
	const n = 1000
	bin := triageBinary(b)
	dir := benchDir(b)
	files := smallEmails(b, dir, n)
	_, srv := scenarioModel(b)
	runs := 0
	for _, model := range []struct{ name, url string }{{"in-process", ""}, {"apart", srv.URL()}} {
		b.Run("model="+model.name, func(b *testing.B) {
			// Each run writes to a fresh directory: removing 1,000 replies
			// just before writing 1,000 more would make the file system's
			// search for free inodes part of the figure (ext4 without a
			// journal skips those freed in the last minute, five while
			// their inode table is unwritten).
			cpu := func(files ...string) usage {
				runs++
				o := runOptions{flags: []string{"--concurrency", "4"}, model: model.url, state: fmt.Sprintf("run-%s-%d", model.name, runs)}
				u := measureUsage(b, bin, dir, o, files...)
				if u.code != 0 {
					b.Fatalf("triage process exited %d", u.code)
				}
				return u
			}
			for range b.N {
				one, all := cpu(files[0]), cpu(files...)
				user, sys := float64(all.userMS-one.userMS)/(n-1), float64(all.sysMS-one.sysMS)/(n-1)
				b.ReportMetric(user+sys, "cpu-ms/email")
				b.ReportMetric(user, "user-ms/email")
				b.ReportMetric(sys, "sys-ms/email")
				b.Logf("model %s: %d emails, %d ms of CPU (%d user, %d system), one email %d ms: %.2f ms per email, %.2f user and %.2f system (target <= 3)",
					model.name, n, all.userMS+all.sysMS, all.userMS, all.sysMS, one.userMS+one.sysMS, user+sys, user, sys)
			}
		})
	}
}
