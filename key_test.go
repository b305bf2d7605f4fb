package triage_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/message"
)

func TestKeyOf(t *testing.T) {
	tests := []struct {
		name, header string
		want         triage.Key
	}{
		{"windows-1250 name", "From: =?windows-1250?Q?Pawe=B3?= <Pawel@Example.pl>\r\nMessage-ID: <a@x>\r\n\r\n", "msgid:<a@x>|pawel@example.pl"},
		{"iso-8859-2 name", "From: =?ISO-8859-2?B?o3VrYXN6?= <l@example.pl>\r\nMessage-ID: <a@x>\r\n\r\n", "msgid:<a@x>|l@example.pl"},
		{"no sender", "Message-ID: <a@x>\r\n\r\n", "msgid:<a@x>|"},
		{"no message-id", "From: a@example.pl\r\n\r\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := message.Parse([]byte(tc.header))
			if err != nil {
				t.Fatal(err)
			}
			got := triage.KeyOf(m, []byte(tc.header))
			if tc.name == "no message-id" {
				// The hash stands for the bytes: same bytes, same key; other bytes, another.
				if got != triage.KeyOf(m, []byte(tc.header)) || got == triage.KeyOf(m, []byte(tc.header+"x")) || len(got) != len("sha256:")+64 {
					t.Errorf("KeyOf = %q: not a stable hash of the bytes", got)
				}
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("KeyOf (-want +got):\n%s", diff)
			}
		})
	}
	if got := triage.KeyOf(nil, []byte("x")); got != triage.KeyOf(nil, []byte("x")) || got == "" {
		t.Errorf("KeyOf(nil) = %q", got)
	}
}
