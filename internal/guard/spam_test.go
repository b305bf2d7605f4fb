package guard

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/message"
)

// TestSpamVerdict: the receiving server's spam verdict skips a message as
// spam, before anything else; a "No" verdict never clears one, and one a
// stranger wrote only keeps their own message from an answer.
func TestSpamVerdict(t *testing.T) {
	scored := Config{Spam: SpamScore{Header: "x-spam-score", Threshold: 6}}
	tests := []struct {
		name   string
		cfg    Config
		header map[string][]string
		want   Verdict
	}{
		{"X-Spam-Flag YES", cfg, map[string][]string{"X-Spam-Flag": {"YES"}}, Verdict{true, triage.ReasonSpam, "X-Spam-Flag: YES"}},
		{"X-Spam-Flag NO", cfg, map[string][]string{"X-Spam-Flag": {"NO"}}, Verdict{}},
		{"a stranger's NO beside the server's YES", cfg, map[string][]string{"X-Spam-Flag": {"NO", "YES"}}, Verdict{true, triage.ReasonSpam, "X-Spam-Flag: YES"}},
		{"X-Spam-Status Yes", cfg, map[string][]string{"X-Spam-Status": {"Yes, score=8.2 required=5.0 tests=BAYES_99;\r\n\tautolearn=spam"}}, Verdict{true, triage.ReasonSpam, "X-Spam-Status: Yes, score=8.2 required=5.0 tests=BAYES_99"}},
		{"X-Spam-Status No", cfg, map[string][]string{"X-Spam-Status": {"No, score=4.9 required=5.0"}}, Verdict{}},
		{"rspamd X-Spam", cfg, map[string][]string{"X-Spam": {"Yes"}}, Verdict{true, triage.ReasonSpam, "X-Spam: Yes"}},
		{"rspamd add header", cfg, map[string][]string{"X-Rspamd-Action": {"add header"}}, Verdict{true, triage.ReasonSpam, "X-Rspamd-Action: add header"}},
		{"rspamd reject", cfg, map[string][]string{"X-Rspamd-Action": {"Reject"}}, Verdict{true, triage.ReasonSpam, "X-Rspamd-Action: Reject"}},
		{"rspamd rewrite subject", cfg, map[string][]string{"X-Rspamd-Action": {"rewrite  subject"}}, Verdict{true, triage.ReasonSpam, "X-Rspamd-Action: rewrite  subject"}},
		{"rspamd no action", cfg, map[string][]string{"X-Rspamd-Action": {"no action"}}, Verdict{}},
		{"rspamd greylist", cfg, map[string][]string{"X-Rspamd-Action": {"greylist"}}, Verdict{}},
		{"rspamd result True", cfg, map[string][]string{"X-Spamd-Result": {"default: True [17.30 / 15.00];\n\tBAYES_SPAM(5.10)"}}, Verdict{true, triage.ReasonSpam, "X-Spamd-Result: default: True [17.30 / 15.00]"}},
		{"rspamd result False", cfg, map[string][]string{"X-Spamd-Result": {"default: False [3.10 / 15.00]"}}, Verdict{}},
		{"configured header over the threshold", scored, map[string][]string{"X-Spam-Score": {"7.25"}}, Verdict{true, triage.ReasonSpam, "X-Spam-Score: 7.25 (score 7.25, threshold 6)"}},
		{"configured header at the threshold", scored, map[string][]string{"X-Spam-Score": {"6"}}, Verdict{true, triage.ReasonSpam, "X-Spam-Score: 6 (score 6, threshold 6)"}},
		{"configured header under the threshold", scored, map[string][]string{"X-Spam-Score": {"5.9"}}, Verdict{}},
		{"configured header with score=", Config{Spam: SpamScore{Header: "X-Spam-Status", Threshold: 4}}, map[string][]string{"X-Spam-Status": {"No, score=4.5 required=5.0"}}, Verdict{true, triage.ReasonSpam, "X-Spam-Status: No, score=4.5 required=5.0 (score 4.5, threshold 4)"}},
		{"configured rspamd result", Config{Spam: SpamScore{Header: "X-Spamd-Result", Threshold: 6}}, map[string][]string{"X-Spamd-Result": {"default: False [9.10 / 15.00]; BAYES_SPAM(5.10)"}}, Verdict{true, triage.ReasonSpam, "X-Spamd-Result: default: False [9.10 / 15.00] (score 9.1, threshold 6)"}},
		{"configured header without a number", scored, map[string][]string{"X-Spam-Score": {"high"}}, Verdict{}},
		{"configured header absent", scored, map[string][]string{"X-Spam-Level": {"*******"}}, Verdict{}},
		{"spam first: over a list header", cfg, map[string][]string{"X-Spam-Flag": {"YES"}, "List-Id": {"<x.example.org>"}}, Verdict{true, triage.ReasonSpam, "X-Spam-Flag: YES"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &message.Message{From: mustAddr("anna@example.pl"), ReplyTo: "anna@example.pl", Header: tt.header}
			if diff := cmp.Diff(tt.want, Check(tt.cfg, m)); diff != "" {
				t.Errorf("Check (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckSpamHeader(t *testing.T) {
	for _, ok := range []string{"", "X-Spam-Score", "X-Spamd-Result"} {
		if err := CheckSpamHeader(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"X Spam", "X-Spam:", "X-Späm"} {
		if err := CheckSpamHeader(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}
