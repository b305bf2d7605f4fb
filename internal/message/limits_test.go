package message

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestHeaderCaps: a header block or a field over its cap is an error naming
// the limit, read without parsing the whole block.
func TestHeaderCaps(t *testing.T) {
	base := "From: anna@example.pl\r\nTo: serwis@example.com\r\nSubject: hej\r\n"
	body := "\r\nSN-48213-PL\r\n"
	short := strings.Repeat("X-A: b\r\n", (DefaultMaxHeaderBytes/8)+10) // just over 256 KiB of short fields
	tests := []struct {
		name    string
		raw     string
		lim     Limits
		wantErr error
		detail  string
	}{
		{name: "many short fields", raw: base + short + body, wantErr: ErrHeaderTooLarge, detail: "header block exceeds 262144 bytes"},
		{name: "25 MB of short fields", raw: base + strings.Repeat("X-A: b\r\n", 25<<20/8) + body, wantErr: ErrHeaderTooLarge, detail: "header block exceeds"},
		{name: "header without an end", raw: base + short, wantErr: ErrHeaderTooLarge, detail: "header block exceeds"},
		{name: "one long folded field", raw: base + "References: " + strings.Repeat("<a@b>\r\n ", 20000) + "<z@b>\r\n" + body, wantErr: ErrHeaderTooLarge, detail: `header field "References" exceeds 65536 bytes`},
		{name: "configured lower caps", raw: base + strings.Repeat("X-A: b\r\n", 200) + body, lim: Limits{HeaderBytes: 1024}, wantErr: ErrHeaderTooLarge, detail: "exceeds 1024 bytes"},
		{name: "configured field cap", raw: base + "X-Long: " + strings.Repeat("a", 300) + "\r\n" + body, lim: Limits{FieldBytes: 100}, wantErr: ErrHeaderTooLarge, detail: `header field "X-Long" exceeds 100 bytes`},
		{name: "under the caps", raw: base + strings.Repeat("X-A: b\r\n", 1000) + "References: " + strings.Repeat("<a@b>\r\n ", 1000) + "<z@b>\r\n" + body},
		{name: "LF line endings", raw: strings.ReplaceAll(base+strings.Repeat("X-A: b\r\n", 1000)+body, "\r\n", "\n")},
		{name: "big body is not header", raw: base + "\r\n" + strings.Repeat("SN-48213-PL\r\n", 100000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseLimits([]byte(tt.raw), tt.lim)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				if m.From.Address != "anna@example.pl" {
					t.Errorf("From = %q", m.From.Address)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.detail) || !strings.HasPrefix(err.Error(), "message: ") {
				t.Fatalf("err = %v, want %v with %q", err, tt.wantErr, tt.detail)
			}
		})
	}
	if _, err := Parse([]byte(base + short + body)); !errors.Is(err, ErrHeaderTooLarge) {
		t.Errorf("Parse uses the default caps: err = %v", err)
	}
}

// TestSubjectCleaned: the decoded subject loses CR/LF and other control
// characters and is capped at MaxSubjectBytes on a rune boundary (item 7).
func TestSubjectCleaned(t *testing.T) {
	tests := []struct {
		name, subject string
		want          string
	}{
		{"encoded CR LF", "=?utf-8?q?Reklamacja=0D=0ABcc:_x@evil.example?=", "Reklamacja Bcc: x@evil.example"},
		{"controls dropped", "=?utf-8?q?a=00b=1Bc=7Fd=C2=85e=09f?=", "abcde f"},
		{"plain kept", "Zażółć gęślą jaźń", "Zażółć gęślą jaźń"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte("From: anna@example.pl\r\nSubject: " + tt.subject + "\r\n\r\nhej\r\n"))
			if err != nil {
				t.Fatal(err)
			}
			if m.Subject != tt.want {
				t.Errorf("Subject = %q, want %q", m.Subject, tt.want)
			}
		})
	}

	long := strings.Repeat("ż", 5000) // 10,000 bytes, two per rune
	var folded strings.Builder
	for i := 0; i < len(long); i += 30 {
		fmt.Fprintf(&folded, " =?utf-8?b?%s?=\r\n", base64.StdEncoding.EncodeToString([]byte(long[i:min(i+30, len(long))])))
	}
	m, err := Parse([]byte("From: anna@example.pl\r\nSubject:" + folded.String() + "\r\nhej\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Subject) > MaxSubjectBytes || len(m.Subject) < MaxSubjectBytes-4 || !utf8.ValidString(m.Subject) || !strings.HasPrefix(m.Subject, "żż") {
		t.Errorf("long subject: %d bytes, valid UTF-8 %v, want at most %d", len(m.Subject), utf8.ValidString(m.Subject), MaxSubjectBytes)
	}
}

// BenchmarkHugeHeader reports the cost of a 25 MB block of short header
// fields refused by the cap ("capped"), and, with TRIAGE_BENCH_UNCAPPED=1,
// parsed as before the cap ("uncapped", caps lifted: about 2 GB and several
// seconds per message, so not part of `make bench` by default). Run with
// -benchmem.
func BenchmarkHugeHeader(b *testing.B) {
	raw := []byte("From: anna@example.pl\r\nSubject: x\r\n" + strings.Repeat("X-A: b\r\n", 25<<20/8) + "\r\nbody\r\n")
	b.Run("capped", func(b *testing.B) {
		for b.Loop() {
			if _, err := Parse(raw); !errors.Is(err, ErrHeaderTooLarge) {
				b.Fatal(err)
			}
		}
	})
	b.Run("uncapped", func(b *testing.B) {
		if os.Getenv("TRIAGE_BENCH_UNCAPPED") == "" {
			b.Skip("set TRIAGE_BENCH_UNCAPPED=1: parses 25 MB of header fields (about 2 GB)")
		}
		for b.Loop() {
			if _, err := ParseLimits(raw, Limits{HeaderBytes: 1 << 30, FieldBytes: 1 << 30}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
