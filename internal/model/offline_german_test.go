package model

import (
	"strings"
	"testing"
)

// TestPhrasesFor: the stand-in writes the customer's language when it has
// a template for it, else the inbox's default language, and says in it
// that it is a stand-in.
func TestPhrasesFor(t *testing.T) {
	tests := []struct{ lang, def, want string }{
		{"de", "pl", german.automatic},
		{"en", "pl", english.automatic},
		{"pl", "en", polish.automatic},
		{"ja", "en", english.automatic}, // no Japanese template: the default
		{"fr", "de", german.automatic},
		{"fr", "", polish.automatic},
		{"", "", polish.automatic},
		{" DE ", "pl", german.automatic},
	}
	for _, tt := range tests {
		if got := phrasesFor(tt.lang, tt.def).automatic; got != tt.want {
			t.Errorf("phrasesFor(%q, %q) says %q, want %q", tt.lang, tt.def, got, tt.want)
		}
	}
	for code, p := range templates {
		if p.greeting == "" || p.automatic == "" || p.askSerial == "" || p.valid == "" || !strings.Contains(p.attachments, "%d") {
			t.Errorf("template %s is incomplete", code)
		}
	}
}
