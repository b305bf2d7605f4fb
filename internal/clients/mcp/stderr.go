package mcp

import (
	"bytes"
	"log/slog"
	"sync"
)

// maxStderrLine caps one logged stderr line.
const maxStderrLine = 512

// stderrLog is a stdio server's stderr: each line (cut at maxStderrLine) is
// logged, up to a byte budget per server start; past it lines are dropped
// and counted, the count logged when the budget is first exceeded and at
// every further MiB.
type stderrLog struct {
	log     *slog.Logger
	mu      sync.Mutex
	budget  int
	partial []byte
	dropped int
	last    string // the last line, for a start-up error
	redact  func(string) string
}

func newStderrLog(log *slog.Logger, budget int, redact func(string) string) *stderrLog {
	return &stderrLog{log: log, budget: budget, redact: redact}
}

func (w *stderrLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			room := maxStderrLine - len(w.partial)
			if room > 0 {
				w.partial = append(w.partial, p[:min(room, len(p))]...)
			}
			break
		}
		line := append(w.partial, p[:i]...)
		w.partial = w.partial[:0]
		p = p[i+1:]
		w.emit(line)
	}
	return n, nil
}

// Last returns the last line written.
func (w *stderrLog) Last() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

func (w *stderrLog) emit(line []byte) {
	line = bytes.TrimRight(line, "\r")
	if len(line) == 0 {
		return
	}
	if len(line) > maxStderrLine {
		line = line[:maxStderrLine]
	}
	w.last = w.redact(string(line))
	if w.budget <= 0 {
		before := w.dropped
		w.dropped += len(line)
		if before == 0 || before/(1<<20) != w.dropped/(1<<20) {
			w.log.Warn("mcp: server stderr over its log budget; dropping", "dropped_bytes", w.dropped)
		}
		return
	}
	w.budget -= len(line)
	w.log.Info("mcp: server stderr", "line", w.last)
}
