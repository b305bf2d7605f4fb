package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"triage/internal/mailauth"
)

// The oauth2 blocks of the imap and smtp sections are validated with the
// rest of the configuration: every problem named by its key, before
// anything is contacted.
func TestWatchOAuth2Config(t *testing.T) {
	noDefaultConfig(t)
	t.Setenv(mailauth.SecretEnv, "")
	os.Unsetenv(mailauth.SecretEnv)
	csv, _ := filepath.Abs(filepath.Join("..", "..", "examples", "warranty.csv"))
	tests := []struct {
		name       string
		imap, smtp string // the sections' oauth2 lines (indented under them)
		files      map[string]string
		wantCode   int
		want       []string // substrings of the output
	}{
		{
			name: "client credentials, smtp shares imap's",
			imap: "  oauth2:\n    token_url: https://login.microsoftonline.com/t/oauth2/v2.0/token\n    client_id: app\n    client_secret_file: secret\n    scopes: [https://outlook.office365.com/.default]\n    mechanism: xoauth2\n",
			smtp: "  oauth2: imap\n", files: map[string]string{"secret": "s3cret\n"},
			want: []string{"configuration valid"},
		},
		{
			name:  "refresh token, its own smtp block",
			imap:  "  oauth2: {token_url: https://oauth2.googleapis.com/token, client_id: app, client_secret_file: secret, scopes: [https://mail.google.com/], refresh_token_file: rt}\n",
			smtp:  "  oauth2: {token_url: https://oauth2.googleapis.com/token, client_id: app, client_secret_file: secret, scopes: [https://mail.google.com/], refresh_token_file: rt2}\n",
			files: map[string]string{"secret": "s3cret\n", "rt": "1//r\n", "rt2": "1//s\n"},
			want:  []string{"configuration valid"},
		},
		{
			name: "unknown key", wantCode: exitUsage,
			imap: "  oauth2: {tokenurl: https://x/token, client_id: app}\n",
			want: []string{`unknown field "tokenurl" in oauth2; valid: client_id, client_secret_file, mechanism, refresh_token_file, scopes, token_url`},
		},
		{
			name: "every missing piece", wantCode: exitUsage,
			imap: "  oauth2: {token_url: http://login.example.com/token, mechanism: plain, refresh_token_file: missing.token}\n",
			smtp: "  oauth2: {client_id: app, scopes: [x], client_secret_file: nosuch}\n",
			want: []string{
				`imap.oauth2.token_url "http://login.example.com/token": want an https:// URL`,
				"imap.oauth2.client_id: missing", "imap.oauth2.scopes: missing",
				`imap.oauth2.mechanism "plain": want xoauth2 or oauthbearer`,
				"smtp.oauth2.token_url: missing",
			},
		},
		{
			name: "secret and refresh token files", wantCode: exitUsage,
			imap:  "  oauth2: {token_url: https://x.example/token, client_id: app, scopes: [x], refresh_token_file: missing.token}\n",
			smtp:  "  oauth2: {token_url: https://x.example/token, client_id: app, scopes: [x], client_secret_file: empty}\n",
			files: map[string]string{"empty": "\n"},
			want:  []string{"imap.oauth2.client_secret_file: missing (or set TRIAGE_OAUTH2_CLIENT_SECRET", "smtp.oauth2.client_secret_file: ", "empty is empty"},
		},
		{
			name: "sharing what does not exist", wantCode: exitUsage,
			imap: "  password: pw\n", smtp: "  oauth2: imap\n",
			want: []string{"smtp.oauth2: imap: the imap section has no oauth2 block to share"},
		},
		{
			name: "imap cannot share", wantCode: exitUsage,
			imap: "  oauth2: imap\n",
			want: []string{"imap.oauth2: imap: only the smtp section can share"},
		},
		{
			name: "not a block", wantCode: exitUsage,
			imap: "  oauth2: smtp\n",
			want: []string{`oauth2: "smtp": want a block`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tt.files {
				writeTestFile(t, filepath.Join(dir, name), content)
			}
			cfg := filepath.Join(dir, "triage.yaml")
			writeTestFile(t, cfg, "imap:\n  addr: imap.example.com:993\n  user: support@example.com\n"+tt.imap+
				"smtp:\n  addr: smtp.example.com:587\n"+tt.smtp+
				"ledger: ledger.db\npipeline: {offline: true, warranty_csv: "+csv+", tickets_db: tickets.db}\n")
			code, stdout, stderr := runArgs(t, "watch", "--config", cfg, "--check")
			out := stdout + stderr
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d:\n%s", code, tt.wantCode, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output does not say %q:\n%s", w, out)
				}
			}
		})
	}
}
