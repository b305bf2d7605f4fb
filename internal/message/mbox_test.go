package message

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readMbox(t *testing.T, in string, max int) ([]string, []int) {
	t.Helper()
	r := NewMboxReader(strings.NewReader(in), max)
	var msgs []string
	var tooLarge []int
	for {
		b, n, err := r.Next()
		if err == io.EOF {
			return msgs, tooLarge
		}
		if errors.Is(err, ErrMboxTooLarge) {
			tooLarge = append(tooLarge, n)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, string(b))
	}
}

func TestMboxReader(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		max      int
		want     []string
		tooLarge []int
	}{
		{
			name: "two messages, mboxrd quoting undone",
			in: "From a@x Mon Jan  1 00:00:00 2026\nSubject: one\n\nhello\n>From the start\n>>From deeper\n\n" +
				"From b@x Mon Jan  1 00:00:00 2026\r\nSubject: two\r\n\r\nbye\r\n",
			want: []string{
				"Subject: one\r\n\r\nhello\r\nFrom the start\r\n>From deeper\r\n",
				"Subject: two\r\n\r\nbye\r\n",
			},
		},
		{name: "empty", in: "", want: nil},
		{name: "text before the first separator is not a message", in: "junk\nFrom a@x\nSubject: s\n\nb\n", want: []string{"Subject: s\r\n\r\nb\r\n"}},
		{
			name:     "an oversized message is skipped, the next one read",
			in:       "From a\nSubject: big\n\n" + strings.Repeat("x", 200) + "\nFrom b\nSubject: small\n\nok\n",
			max:      100,
			want:     []string{"Subject: small\r\n\r\nok\r\n"},
			tooLarge: []int{1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, big := readMbox(t, tt.in, tt.max)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.tooLarge, big); diff != "" {
				t.Errorf("too large (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIsMbox(t *testing.T) {
	if !IsMbox([]byte("From a@x Mon\n")) || IsMbox([]byte("From: a@x\n")) {
		t.Error("IsMbox: want true for a separator line, false for a From: header")
	}
}
