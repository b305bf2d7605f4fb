package e2e

import (
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"
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

// BenchmarkWatchCPUPerMessage: CPU time (user + system, of the triage
// process, as getrusage reports it) per message of `triage watch --once`
// over n messages in an IMAP inbox (the go-imap memory server, the SMTP
// sink, the SQLite ledger and ticket store), against `triage process` over
// the same n emails as files (the outbox), both at --concurrency 4 and at
// zero model latency, the offline model served by the benchmark's process
// as triage asks Gemini. Each figure is the run over n less the run over
// one message (start-up; for watch also the login and the pass's own
// look-ups), over n-1. It reports both and their ratio (target: watch at
// most 1.5x process). The servers run in the benchmark's process, so their
// CPU is in neither figure. With -benchtime Nx it runs N times and reports
// the median of each figure (and the ratio of the medians).
//
//	go test -run '^$' -bench WatchCPUPerMessage -benchtime 5x ./e2e
//
// TRIAGE_BENCH_MESSAGES (default 300) changes n; TRIAGE_BENCH_BINARY
// names a built triage to measure instead of this tree's, so two builds
// can be run in turn.
func BenchmarkWatchCPUPerMessage(b *testing.B) {
	n := benchMessages(b, 300)
	bin := benchBinary(b)
	dir := benchDir(b)
	files := smallEmails(b, dir, n)
	_, srv := scenarioModel(b)
	runs := 0
	process := func(files ...string) usage {
		runs++
		u := measureUsage(b, bin, dir, runOptions{flags: []string{"--concurrency", "4"}, model: srv.URL(), state: fmt.Sprintf("run-%d", runs)}, files...)
		if u.code != 0 {
			b.Fatalf("triage process exited %d", u.code)
		}
		return u
	}
	var watchCPU, watchUser, watchSys, processCPU []float64
	for range b.N {
		wOne, wAll := watchUsage(b, bin, srv.URL(), 1), watchUsage(b, bin, srv.URL(), n)
		pOne, pAll := process(files[0]), process(files...)
		per := func(one, all usage) (user, sys float64) {
			return float64(all.userMS-one.userMS) / float64(n-1), float64(all.sysMS-one.sysMS) / float64(n-1)
		}
		wu, ws := per(wOne, wAll)
		pu, ps := per(pOne, pAll)
		watchCPU, watchUser, watchSys, processCPU = append(watchCPU, wu+ws), append(watchUser, wu), append(watchSys, ws), append(processCPU, pu+ps)
		b.Logf("%d messages: watch %.2f ms of CPU a message (%.2f user, %.2f system; one message %d ms), process %.2f (%.2f user, %.2f system; one email %d ms): %.2fx (target <= 1.5)",
			n, wu+ws, wu, ws, wOne.userMS+wOne.sysMS, pu+ps, pu, ps, pOne.userMS+pOne.sysMS, (wu+ws)/(pu+ps))
	}
	// Each figure is the median of the iterations': one run's CPU moves by
	// tens of percent with what else the machine does, process's most.
	b.ReportMetric(median(watchCPU), "watch-cpu-ms/msg")
	b.ReportMetric(median(watchUser), "watch-user-ms/msg")
	b.ReportMetric(median(watchSys), "watch-sys-ms/msg")
	b.ReportMetric(median(processCPU), "process-cpu-ms/msg")
	b.ReportMetric(median(watchCPU)/median(processCPU), "watch/process")
}

// median is the middle of xs (the mean of the middle two for an even
// count); xs is sorted in place.
func median(xs []float64) float64 {
	slices.Sort(xs)
	if n := len(xs); n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[len(xs)/2]
}

// watchUsage runs bin's `triage watch --once` (concurrency 4, the SQLite ledger,
// the model at modelURL as Gemini) over an inbox of n small emails, the
// same as smallEmails writes, and returns its CPU time; every message
// must be replied to.
func watchUsage(b *testing.B, bin, modelURL string, n int) usage {
	b.Helper()
	w := newWorld(b, "concurrency: 4\n")
	w.online()
	for i := range n {
		w.tgt.Append(b, "INBOX", []byte(smallEmail(i)))
	}
	cmd := w.command("watch", "--config", w.config, "--once")
	cmd.Path, cmd.Args[0] = bin, bin
	cmd.Env = append(cmd.Env, "GEMINI_API_KEY=bench", "GOOGLE_GEMINI_BASE_URL="+modelURL)
	if err := cmd.Run(); err != nil {
		b.Fatalf("watch --once: %v\n%s", err, tail(w.logs(), 3000))
	}
	if got := len(w.sink.Messages()); got != n {
		b.Fatalf("watch replied to %d of %d messages:\n%s", got, n, tail(w.logs(), 3000))
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		b.Skip("no getrusage on this platform")
	}
	return usage{userMS: time.Duration(ru.Utime.Nano()).Milliseconds(), sysMS: time.Duration(ru.Stime.Nano()).Milliseconds()}
}
