package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"triage/internal/model"
	"triage/internal/store"
	"triage/internal/testkit/mailtest"
)

// BenchmarkFleetBacklog: how fast W daemons (real `triage watch`
// binaries, concurrency c each, one inbox, one PostgreSQL store) drain a
// backlog when every model call takes a fixed latency L (the offline
// stand-in reached as Gemini through the real genai SDK). It reports
// messages/s from the first daemon's start to the last message settled,
// the ceiling c·W/(k·L) (k: model calls per message, counted at the
// stand-in) and their ratio, the same ratio over the run without its first
// and its last c·W messages (steady-ratio: what the start and the tail
// cost is the difference), the store's transactions and the daemons' CPU
// time (user and system) per message. Run with
//
//	go test -run '^$' -bench FleetBacklog -benchtime 1x ./e2e
//
// TRIAGE_BENCH_LATENCY (default 300ms) and TRIAGE_BENCH_MESSAGES (default
// 16 per worker) change the load; TRIAGE_BENCH_BINARY names a built triage
// for the daemons to run instead of this tree's (runs of two builds,
// interleaved, compare them on a busy machine); TRIAGE_BENCH_LOG=PATH
// writes the daemons' logs of each run to PATH.W.
func BenchmarkFleetBacklog(b *testing.B) {
	lat := benchLatency(b, 300*time.Millisecond)
	const c = 4
	for _, daemons := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("daemons=%d", daemons), func(b *testing.B) {
			n := 16 * c * daemons
			if v := os.Getenv("TRIAGE_BENCH_MESSAGES"); v != "" {
				fmt.Sscan(v, &n)
			}
			for range b.N {
				srv, err := model.StartOffline(model.OfflineOptions{Latency: lat})
				if err != nil {
					b.Fatal(err)
				}
				f := newFleet(b, []mailtest.Target{mailtest.StartIMAP(b, mailtest.IMAPOptions{}).Target()}, fmt.Sprintf("concurrency: %d\n", c))
				w := f.inboxes[0]
				// The stand-in plays Gemini here, so the pipeline is not
				// forced offline.
				w.online()
				f.env = []string{"GEMINI_API_KEY=bench", "GOOGLE_GEMINI_BASE_URL=" + srv.URL()}
				f.bin = benchBinary(b) // built before the clock below
				var msgs []inbound
				for i := range n {
					msgs = append(msgs, w.deliver(i))
				}
				x0 := storeXacts(b, f.store)
				execAt := time.Now()
				for i := range daemons {
					f.start(i)
				}
				// The daemons' logs first (a "message" line for each message
				// settled), which cost the machine the daemons share nothing,
				// then the ledger, which a look-up costs a connection to the
				// store, a migration check and a read.
				for strings.Count(w.logs(), `"msg":"message"`) < n {
					time.Sleep(50 * time.Millisecond)
				}
				polls := 1
				for f.unsettled(msgs) > 0 {
					polls++
					time.Sleep(100 * time.Millisecond)
				}
				f.stop()
				srv.Close()
				// The daemons' CPU time (user and system), from their start
				// to their exit.
				var cpu time.Duration
				for _, d := range f.daemons {
					cpu += d.ProcessState.UserTime() + d.ProcessState.SystemTime()
				}
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(n), "daemon-cpu-ms/msg")
				// The store's transactions per message: the daemons' (from
				// their start to their exit, idle polls included), less the
				// benchmark's own look-ups of what is settled.
				x1 := storeXacts(b, f.store)
				x2 := storeXacts(b, f.store)
				own := x2 - x1 // what reading the figure costs
				f.unsettled(msgs)
				perPoll := storeXacts(b, f.store) - x2 - own
				xacts := float64(x1-x0-own-int64(polls)*perPoll) / float64(n)
				b.ReportMetric(xacts, "store-xacts/msg")
				if path := os.Getenv("TRIAGE_BENCH_LOG"); path != "" {
					if err := os.WriteFile(fmt.Sprintf("%s.%d", path, daemons), []byte(w.logs()), 0o644); err != nil {
						b.Fatal(err)
					}
				}
				logs := w.logs()
				lines := logLines(logs)
				first, last := fleetSpan(b, lines, logs)
				elapsed := last.Sub(first)
				tl := fleetTimeline(lines, first, c*daemons)
				b.Logf("from the first daemon's start (its process started %s before, not counted): last daemon started %s, first pass %s, last daemon's language models loaded %s, first message settled %s; the last %d messages settled over %s",
					first.Sub(execAt).Round(time.Millisecond), tl.lastStart, tl.firstPass, tl.modelsLoaded, tl.firstMessage, c*daemons, tl.tail)
				k := float64(srv.Requests()) / float64(n)
				rate := float64(n) / elapsed.Seconds()
				ceiling := float64(c*daemons) / (k * lat.Seconds())
				b.ReportMetric(rate, "msgs/s")
				b.ReportMetric(ceiling, "ceiling-msgs/s")
				b.ReportMetric(rate/ceiling, "ratio")
				b.ReportMetric(tl.steady/ceiling, "steady-ratio")
				b.Logf("%d daemons × concurrency %d, L=%s, %d messages, k=%.2f model calls/message, %d replies: %.2f msgs/s in %s; ceiling c·W/(k·L) = %.2f; ratio %.2f; %.1f store transactions and %.1f ms of the daemons' CPU a message",
					daemons, c, lat, n, k, len(w.sink.Messages()), rate, elapsed.Round(time.Millisecond), ceiling, rate/ceiling, xacts, float64(cpu.Microseconds())/1000/float64(n))
			}
		})
	}
}

// logLine is what the fleet's benchmark reads of a line of the daemons'
// JSON logs.
type logLine struct {
	Time time.Time `json:"time"`
	Msg  string    `json:"msg"`
}

// logLines are the daemons' log lines that are JSON, in their order.
func logLines(logs string) []logLine {
	var lines []logLine
	for _, line := range strings.Split(logs, "\n") {
		var rec logLine
		if json.Unmarshal([]byte(line), &rec) == nil {
			lines = append(lines, rec)
		}
	}
	return lines
}

// fleetSpan is the time of the first "watch starting" line of the daemons'
// logs (the first pipeline built) and of the last "message" line (the last
// message settled); logs is their text, for a failure's message.
func fleetSpan(b *testing.B, lines []logLine, logs string) (first, last time.Time) {
	for _, rec := range lines {
		switch rec.Msg {
		case "watch starting":
			if first.IsZero() || rec.Time.Before(first) {
				first = rec.Time
			}
		case "message":
			if rec.Time.After(last) {
				last = rec.Time
			}
		}
	}
	if first.IsZero() || last.IsZero() {
		b.Fatalf("no start or no message in the log:\n%s", tail(logs, 3000))
	}
	return first, last
}

// storeXacts is the number of transactions committed in the store's
// database so far (pg_stat_database), once the statistics of the sessions
// that ended have arrived.
func storeXacts(b *testing.B, url string) int64 {
	b.Helper()
	time.Sleep(1500 * time.Millisecond) // sessions report their figures at most once a second, and as they end
	db, err := store.Open(context.Background(), url, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.QueryRowContext(context.Background(), `SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}

// timeline is when the phases of a fleet's run began, from its first
// daemon's start.
type timeline struct {
	lastStart, firstPass, firstMessage time.Duration
	// modelsLoaded is when the last daemon had loaded its language
	// models (negative: before the first daemon's start).
	modelsLoaded time.Duration
	// tail is the time over which the last messages (as many as the
	// fleet's workers) settled: the run's end, where workers run dry.
	tail time.Duration
	// steady is the rate (messages a second) at which the messages
	// settled between the first workers ones and the last workers ones:
	// the run without its start and its tail.
	steady float64
}

// fleetTimeline reads the daemons' log lines (of a fleet of workers
// workers) for timeline.
func fleetTimeline(lines []logLine, first time.Time, workers int) timeline {
	var tl timeline
	var settled []time.Time
	loaded := false
	for _, rec := range lines {
		at := rec.Time.Sub(first)
		switch rec.Msg {
		case "watch starting":
			tl.lastStart = max(tl.lastStart, at)
		case "language models loaded":
			if !loaded || at > tl.modelsLoaded {
				tl.modelsLoaded, loaded = at, true
			}
		case "pass":
			if tl.firstPass == 0 {
				tl.firstPass = at
			}
		case "message":
			settled = append(settled, rec.Time)
		}
	}
	slices.SortFunc(settled, time.Time.Compare)
	if len(settled) > 0 {
		tl.firstMessage = settled[0].Sub(first)
		tl.tail = settled[len(settled)-1].Sub(settled[max(len(settled)-workers, 0)])
		if a, z := workers, len(settled)-workers-1; z > a {
			tl.steady = float64(z-a) / settled[z].Sub(settled[a]).Seconds()
		}
	}
	return tl
}
