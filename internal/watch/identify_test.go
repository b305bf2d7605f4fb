package watch

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A display name in a legacy charset must not cost the key its sender: a
// stranger who sends first with the same Message-ID from another address
// would otherwise make the real message a copy of theirs.
func TestIdentifyKeepsSenderOfCharsetNames(t *testing.T) {
	tests := []struct {
		name, from, want string
	}{
		{"windows-1250", "=?windows-1250?Q?Pawe=B3_Nowak?= <Pawel@Example.pl>", "msgid:<m1@x>|pawel@example.pl"},
		{"iso-8859-2", "=?ISO-8859-2?Q?Pawe=B3_=A3uczak?= <pawel@example.pl>", "msgid:<m1@x>|pawel@example.pl"},
		{"utf-8", "=?UTF-8?Q?Pawe=C5=82?= <pawel@example.pl>", "msgid:<m1@x>|pawel@example.pl"},
		{"plain", "Anna <anna@example.pl>", "msgid:<m1@x>|anna@example.pl"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hdr := "From: " + tc.from + "\r\nTo: support@example.com\r\nSubject: x\r\nMessage-ID: <m1@x>\r\n\r\n"
			got := identify([]byte(hdr))
			if diff := cmp.Diff(tc.want, string(got.Key)); diff != "" {
				t.Errorf("key (-want +got):\n%s", diff)
			}
		})
	}
}
