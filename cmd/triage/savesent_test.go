package main

import "testing"

// smtp.save_sent defaults to false where the provider files SMTP-sent mail
// in Sent itself (Gmail, Microsoft 365), true elsewhere; set, it wins.
func TestSaveSentDefault(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		addr string
		set  *bool
		want bool
	}{
		{"smtp.gmail.com:587", nil, false},
		{"SMTP.Office365.com:587", nil, false},
		{"smtp-mail.outlook.com:587", nil, false},
		{"mail.example.com:587", nil, true},
		{"127.0.0.1:2525", nil, true},
		{"smtp.gmail.com:587", &yes, true},
		{"mail.example.com:587", &no, false},
	}
	for _, tc := range tests {
		if got := (&watchOptions{SMTP: serverOptions{Addr: tc.addr}, SaveSent: tc.set}).saveSent(); got != tc.want {
			t.Errorf("%s (set %v): save_sent %v, want %v", tc.addr, tc.set, got, tc.want)
		}
	}
}
