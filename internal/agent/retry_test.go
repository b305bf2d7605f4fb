package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"syscall"
	"testing"
	"time"

	"google.golang.org/genai"
)

func TestTemporary(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: &net.AddrError{Err: "x"}}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"503", genai.APIError{Code: 503, Status: "UNAVAILABLE"}, true},
		{"500", genai.APIError{Code: 500}, true},
		{"429", genai.APIError{Code: 429}, true},
		{"408", genai.APIError{Code: 408}, true},
		{"wrapped 502", fmt.Errorf("doRequest: %w", genai.APIError{Code: 502}), true},
		{"pointer 504", &genai.APIError{Code: 504}, true},
		{"400", genai.APIError{Code: 400}, false},
		{"401", genai.APIError{Code: 401}, false},
		{"403", genai.APIError{Code: 403}, false},
		{"404", genai.APIError{Code: 404}, false},
		{"canceled", context.Canceled, false},
		{"deadline", fmt.Errorf("post: %w", context.DeadlineExceeded), false},
		{"url error wrapping canceled", &url.Error{Op: "Post", URL: "http://x", Err: context.Canceled}, false},
		{"unexpected EOF", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{"EOF from server", &url.Error{Op: "Post", URL: "http://x", Err: io.EOF}, true},
		{"connection refused", &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}, true},
		{"connection reset", fmt.Errorf("x: %w", syscall.ECONNRESET), true},
		{"net op error", refused, true},
		{"plain error", errors.New("boom"), false},
	}
	for _, tt := range tests {
		if got := Temporary(tt.err); got != tt.want {
			t.Errorf("%s: Temporary(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}

func TestBackoffCapped(t *testing.T) {
	a, err := New(Config{Model: &Gemini{}, RetryBase: 100 * time.Millisecond, RetryMax: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	prev := time.Duration(0)
	for attempt := range 10 {
		d := a.backoff(attempt)
		if d > 500*time.Millisecond || d < prev {
			t.Errorf("backoff(%d) = %v after %v; want growing, capped at 500ms", attempt, d, prev)
		}
		prev = d
	}
	if prev != 500*time.Millisecond {
		t.Errorf("backoff settles at %v, want the cap 500ms", prev)
	}
}
