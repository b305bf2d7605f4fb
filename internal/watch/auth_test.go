package watch

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"triage/internal/testkit/mailtest"
	"triage/internal/trace"
)

// A refused login is not a network blip: Run stops with an *AuthError after
// MaxAuthFailures attempts, /healthz failing meanwhile.
func scenarioAuthRefused(t *testing.T, tgt mailtest.Target) {
	e := newEnv(t, tgt)
	met := trace.NewMetrics()
	w := e.watcher(func(c *Config) {
		c.Password = "wrong-" + c.Password
		c.Metrics = met
		c.MaxAuthFailures = 3
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := w.Run(ctx)
	var ae *AuthError
	if !errors.As(err, &ae) {
		t.Fatalf("Run = %v, want *AuthError", err)
	}
	if ae.Attempts != 3 || ctx.Err() != nil {
		t.Errorf("gave up after %d attempts (ctx %v), want 3 before the deadline", ae.Attempts, ctx.Err())
	}
	rec := httptest.NewRecorder()
	met.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("/healthz = %d after refused logins, want 503", rec.Code)
	}
	// RunOnce (cron) stops at the first refusal.
	if err := w.RunOnce(context.Background()); !errors.As(err, &ae) {
		t.Errorf("RunOnce = %v, want *AuthError", err)
	}
}

func TestAuthRefusedStops(t *testing.T) {
	scenarioAuthRefused(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{}).Target())
}

func TestDovecotAuthRefusedStops(t *testing.T) {
	tgt, _ := dovecotTarget(t)
	scenarioAuthRefused(t, tgt)
}

// A network error keeps the daemon retrying with backoff: no give-up.
func TestNetworkErrorKeepsRetrying(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens: connection refused
	e := newEnv(t, mailtest.StartIMAP(t, mailtest.IMAPOptions{}).Target())
	w := e.watcher(func(c *Config) { c.Addr = addr; c.MaxAuthFailures = 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 800*time.Millisecond)
	defer cancel()
	err = w.Run(ctx)
	if ctx.Err() == nil {
		t.Fatalf("Run gave up on a network error before the stop: %v", err)
	}
	if n := w.Stats().Reconnects; n < 3 {
		t.Errorf("%d reconnects in 800ms, want several (backoff 10ms..100ms)", n)
	}
	if err != nil {
		t.Errorf("Run after stop = %v", err)
	}
}
