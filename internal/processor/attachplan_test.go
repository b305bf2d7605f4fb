package processor

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage/internal/message"
)

func TestPlan(t *testing.T) {
	list := []message.Attachment{
		{Name: "a.jpg", Type: "IMAGE/JPEG", Size: 100},
		{Name: "x.exe", Type: "application/x-msdownload", Size: 10},
		{Name: "b.png", Type: "image/png", Size: 900},
		{Name: "c.pdf", Type: "application/pdf", Size: 300},
		{Name: "d.webp", Type: "image/webp", Size: 0},
		{Name: "e.heic", Type: "image/heic", Size: 300},
	}
	tests := []struct {
		name     string
		cfg      AttachConfig
		excluded map[int]string
		want     []string
	}{
		{"defaults", AttachConfig{}, nil, []string{"a.jpg sent", "x.exe type_not_allowed", "b.png sent", "c.pdf sent", "d.webp empty", "e.heic sent"}},
		{"count: the largest go first, the later of equals first", AttachConfig{MaxCount: 2}, nil,
			[]string{"a.jpg sent", "x.exe type_not_allowed", "b.png over_max_count", "c.pdf sent", "d.webp empty", "e.heic over_max_count"}},
		{"bytes", AttachConfig{MaxBytes: 700}, nil,
			[]string{"a.jpg sent", "x.exe type_not_allowed", "b.png over_max_bytes", "c.pdf sent", "d.webp empty", "e.heic sent"}},
		{"excluded makes room", AttachConfig{MaxCount: 2}, map[int]string{3: NotSentContent},
			[]string{"a.jpg sent", "x.exe type_not_allowed", "b.png over_max_count", "c.pdf content_mismatch", "d.webp empty", "e.heic sent"}},
		{"disabled", AttachConfig{MaxCount: -1}, nil,
			[]string{"a.jpg disabled", "x.exe type_not_allowed", "b.png disabled", "c.pdf disabled", "d.webp empty", "e.heic disabled"}},
		{"configured types", AttachConfig{Types: []string{"application/pdf"}}, nil,
			[]string{"a.jpg type_not_allowed", "x.exe type_not_allowed", "b.png type_not_allowed", "c.pdf sent", "d.webp type_not_allowed", "e.heic type_not_allowed"}},
	}
	for _, tt := range tests {
		var got []string
		for _, d := range planAttachments(list, tt.cfg, tt.excluded) {
			s := d.Name + " sent"
			if !d.Sent {
				s = d.Name + " " + d.Why
			}
			got = append(got, s)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestMatches(t *testing.T) {
	tests := []struct {
		typ  string
		data string
		want bool
	}{
		{"image/jpeg", "\xff\xd8\xff\xe0\x00\x10JFIF\x00", true},
		{"image/jpeg", "MZ\x90\x00 an executable", false},
		{"image/png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", true},
		{"image/png", "<html><body>x</body></html>", false},
		{"image/webp", "RIFF\x24\x00\x00\x00WEBPVP8 ", true},
		{"application/pdf", "%PDF-1.7\n", true},
		{"application/pdf", "PK\x03\x04 a zip", false},
		{"image/heic", "\x00\x00\x00\x18ftypheic\x00\x00\x00\x00", true},
		{"image/heic", "\x00\x00\x00\x18ftypisom\x00\x00\x00\x00", false},
		{"image/heic", "short", false},
	}
	for _, tt := range tests {
		if got := contentMatches(tt.typ, []byte(tt.data)); got != tt.want {
			t.Errorf("contentMatches(%s, %q) = %v, want %v", tt.typ, tt.data, got, tt.want)
		}
	}
}
