package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"syscall"
	"time"

	"google.golang.org/genai"
)

// generate makes one model call under the turn timeout, retrying transient
// errors with capped exponential backoff. newConfig is called once per
// attempt so the SDK never sees a config twice. Usage of the returned
// response is the caller's to count; calls counts every attempt.
func (a *Agent) generate(ctx context.Context, contents []*genai.Content, newConfig func() *genai.GenerateContentConfig) (*genai.GenerateContentResponse, int, error) {
	calls := 0
	for attempt := 0; ; attempt++ {
		if ctx.Err() != nil {
			return nil, calls, ctxStop(ctx)
		}
		config := newConfig()
		cctx := ctx
		if g, ok := a.cfg.Model.(Gate); ok {
			// Waiting for a shared budget is not the model being slow:
			// it happens before the turn's timeout starts.
			var err error
			if cctx, err = g.Wait(ctx, contents, config); err != nil {
				if ctx.Err() != nil {
					return nil, calls, ctxStop(ctx)
				}
				return nil, calls, fmt.Errorf("%w: %w", ErrModel, err)
			}
		}
		tctx, cancel := context.WithTimeoutCause(cctx, a.cfg.TurnTimeout, ErrTurnTimeout)
		calls++
		resp, err := a.cfg.Model.GenerateContent(tctx, a.cfg.ModelName, contents, config)
		turnExpired := tctx.Err() != nil
		cancel()
		if err == nil {
			return resp, calls, nil
		}
		switch {
		case ctx.Err() != nil:
			return nil, calls, ctxStop(ctx)
		case turnExpired:
			return nil, calls, fmt.Errorf("%w after %s", ErrTurnTimeout, a.cfg.TurnTimeout)
		case !Temporary(err):
			return nil, calls, fmt.Errorf("%w: %w", ErrModel, err)
		case attempt >= a.cfg.MaxRetries:
			return nil, calls, fmt.Errorf("%w: giving up after %d attempts: %w", ErrModel, calls, err)
		}
		delay := a.backoff(attempt)
		if hint := retryDelay(err); hint > delay {
			delay = min(hint, a.cfg.RetryMax)
		}
		a.log.DebugContext(ctx, "agent retry", "attempt", calls, "delay", delay, "error", err)
		if err := a.cfg.Sleep(ctx, delay); err != nil {
			if ctx.Err() != nil {
				return nil, calls, ctxStop(ctx)
			}
			return nil, calls, fmt.Errorf("%w: backoff: %w", ErrModel, err)
		}
	}
}

// backoff returns the delay before retry number attempt+1: RetryBase
// doubling per attempt, plus up to 10% jitter, capped at RetryMax.
func (a *Agent) backoff(attempt int) time.Duration {
	d := a.cfg.RetryBase
	for i := 0; i < attempt && d < a.cfg.RetryMax; i++ {
		d *= 2
	}
	if j := int64(d / 10); j > 0 {
		d += time.Duration(rand.Int64N(j))
	}
	return min(d, a.cfg.RetryMax)
}

// RetryDelay is the server's requested wait before another call: the
// google.rpc.RetryInfo retryDelay of a genai.APIError, or 0.
func RetryDelay(err error) time.Duration { return retryDelay(err) }

// retryDelay returns the server's google.rpc.RetryInfo retryDelay carried by
// a genai.APIError (429s usually have one), or 0.
func retryDelay(err error) time.Duration {
	var ae genai.APIError
	if !errors.As(err, &ae) {
		return 0
	}
	for _, d := range ae.Details {
		if t, _ := d["@type"].(string); !strings.HasSuffix(t, "google.rpc.RetryInfo") {
			continue
		}
		s, _ := d["retryDelay"].(string)
		if v, err := time.ParseDuration(s); err == nil && v > 0 {
			return v
		}
	}
	return 0
}

// Temporary reports whether err is worth retrying (genai.APIError with code
// 408, 429 or 5xx; transport errors; not context cancellation).
func Temporary(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ae genai.APIError
	if errors.As(err, &ae) {
		return ae.Code == 408 || ae.Code == 429 || ae.Code >= 500
	}
	var pae *genai.APIError
	if errors.As(err, &pae) && pae != nil {
		return pae.Code == 408 || pae.Code == 429 || pae.Code >= 500
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
