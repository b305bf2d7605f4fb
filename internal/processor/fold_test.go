package processor

import "testing"

func TestFold(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Gwarancja  WYGASŁA!", "gwarancja wygasla"},
		{"Zażółć gęślą jaźń", "zazolc gesla jazn"},
		{"ZAŻÓŁĆ GĘŚLĄ JAŹŃ", "zazolc gesla jazn"},
		{"post-warranty", "post warranty"},
		{"doesn't work", "doesn t work"},
		{"  --Re: SN-123/45  ", "re sn 123 45"},
		{"Straße, Ærø, café", "strasse aero cafe"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := fold(tc.in); got != tc.want {
			t.Errorf("fold(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
