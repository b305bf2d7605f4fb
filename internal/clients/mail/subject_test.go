package mail

import (
	"bytes"
	"testing"

	gomail "github.com/emersion/go-message/mail"
)

func TestReplySubject(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Reklamacja ekspresu", "Re: Reklamacja ekspresu"},
		{"Re: Reklamacja", "Re: Reklamacja"},
		{"RE: Reklamacja", "Re: Reklamacja"},
		{"re:Reklamacja", "Re: Reklamacja"},
		{"Odp: Reklamacja", "Re: Reklamacja"},
		{"AW: Garantie", "Re: Garantie"},
		{"SV: Garanti", "Re: Garanti"},
		{"Re[2]: Reklamacja", "Re: Reklamacja"},
		{"Re(3): Reklamacja", "Re: Reklamacja"},
		{"Re: RE: Odp: AW: SV: Re[2]: Reklamacja", "Re: Reklamacja"},
		{"Re: Re: Re: Re: x", "Re: x"},
		{"Antwort: Reparatur", "Re: Reparatur"},
		{"  Re :  spaced  ", "Re: spaced"},
		{"Re：full-width", "Re: full-width"},
		{"Fwd: warranty", "Re: Fwd: warranty"},
		{"Regarding my kettle", "Re: Regarding my kettle"}, // "Re" without a colon is a word
		{"Resolution: none", "Re: Resolution: none"},
		{"", "Re:"},
		{"Re:", "Re:"},
	}
	for _, tt := range tests {
		if got := ReplySubject(tt.in); got != tt.want {
			t.Errorf("ReplySubject(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRenderToDisplayName(t *testing.T) {
	raw, err := Render(&Reply{From: "Serwis <serwis@example.com>", To: "anna@example.pl", ToName: "Anna Nowak-Żak", Subject: "Re: x", Body: "b", MessageID: "<r@example.com>"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := gomail.CreateReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	to, err := r.Header.AddressList("To")
	if err != nil || len(to) != 1 || to[0].Name != "Anna Nowak-Żak" || to[0].Address != "anna@example.pl" {
		t.Errorf("To = %v (%v), want Anna Nowak-Żak <anna@example.pl>", to, err)
	}
}
