package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"triage/internal/mailauth"
	"triage/internal/testkit/mailtest"
)

// check --json prints one JSON object: the configuration checked, the
// instructions' source, the scenarios and tools, the OAuth2 token obtained
// from a token endpoint on loopback (account, grant, expiry; never the
// token), and the warnings; exit 0.
func TestCheckJSON(t *testing.T) {
	noDefaultConfig(t)
	t.Setenv(mailauth.SecretEnv, "")
	o := mailtest.StartOAuth2(t, mailtest.OAuth2Options{})
	dir := t.TempDir()
	cfg := watchConfig(t, dir, "  offline: true\n")
	writeTestFile(t, filepath.Join(dir, "client.secret"), o.ClientSecret+"\n")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Microsoft 365's shape: client credentials, XOAUTH2, smtp sharing imap's.
	oauth := "  oauth2:\n    token_url: " + o.TokenURL + "\n    client_id: " + o.ClientID +
		"\n    client_secret_file: client.secret\n    scopes: [https://outlook.office365.com/.default]\n    mechanism: xoauth2\n"
	conf := strings.Replace(string(b), "  password: secret\n", oauth, 1)
	conf = strings.Replace(conf, "outbox: state/outbox\n", "smtp:\n  addr: 127.0.0.1:2\n  tls: none\n  oauth2: imap\n", 1)
	writeTestFile(t, cfg, conf)

	start := time.Now()
	code, stdout, stderr := runArgs(t, "check", "--json", "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	var r checkReport
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil || dec.More() {
		t.Fatalf("stdout is not one JSON object (%v):\n%s", err, stdout)
	}
	if !r.Valid || len(r.Problems) != 0 || r.Config == nil || r.Config.Path != cfg || r.Config.Found != "given with --config" {
		t.Errorf("valid %v, problems %v, config %+v; want valid, none, %s given with --config", r.Valid, r.Problems, r.Config, cfg)
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "pipeline.from is not set") {
		t.Errorf("warnings %q, want the one about pipeline.from", r.Warnings)
	}
	if r.Instructions == nil || r.Instructions.Source != "built-in" || r.Instructions.Tools != "tools.yaml" {
		t.Errorf("instructions %+v, want the built-in ones with their tools.yaml", r.Instructions)
	}
	scenarios := map[string]checkScenario{}
	for _, s := range r.Scenarios {
		scenarios[s.Name] = s
	}
	if v := scenarios["valid-warranty"]; strings.Join(v.Functions, ",") != "check_warranty,create_ticket,send_email" || v.File != "scenarios/valid-warranty.md" {
		t.Errorf("valid-warranty: %+v", v)
	}
	if !scenarios["escalation"].Escalate || !scenarios["graceful-degradation"].Fallback {
		t.Errorf("scenario flags missing: %+v", r.Scenarios)
	}
	var send, check *checkTool
	for i := range r.Tools {
		switch r.Tools[i].Name {
		case "send_email":
			send = &r.Tools[i]
		case "check_warranty":
			check = &r.Tools[i]
		}
	}
	if send == nil || !send.Effect || !send.Final || !send.Grounded || send.Parallel || send.Spec != "builtin send_email" || len(send.DeclaredBy) < 5 {
		t.Errorf("send_email: %+v", send)
	}
	if check == nil || !check.Parallel || check.Effect {
		t.Errorf("check_warranty: %+v", check)
	}
	if r.MCPServers != 1 {
		t.Errorf("mcp_servers %d, want 1 (the manuals server)", r.MCPServers)
	}
	if len(r.OAuth2) != 1 {
		t.Fatalf("oauth2: %+v, want one source (smtp shares imap's)", r.OAuth2)
	}
	tok := r.OAuth2[0]
	if tok.Setting != "imap.oauth2" || tok.Account != "serwis@example.com" || tok.TokenURL != o.TokenURL ||
		tok.Grant != "client credentials" || tok.SharedWith != "smtp" {
		t.Errorf("oauth2 report %+v", tok)
	}
	if tok.Expires == nil || tok.Expires.Sub(start) < 59*time.Minute || tok.Expires.Sub(start) > 61*time.Minute ||
		tok.ValidForSeconds < 3540 || tok.ValidForSeconds > 3600 {
		t.Errorf("expires %v, valid for %ds; want about an hour", tok.Expires, tok.ValidForSeconds)
	}
	if o.Stats().Issued != 1 {
		t.Errorf("%d tokens issued, want 1", o.Stats().Issued)
	}
	if at := regexp.MustCompile(`at-[A-Za-z0-9_-]{8,}`).FindString(stdout + stderr); at != "" {
		t.Errorf("check printed an access token: %s", at)
	}
}

// An invalid configuration: check --json still prints one JSON object,
// valid false with every problem, and exits 2 without a word on stderr; a
// token endpoint that refuses the client is a problem too.
func TestCheckJSONProblems(t *testing.T) {
	noDefaultConfig(t)
	t.Setenv(mailauth.SecretEnv, "")
	o := mailtest.StartOAuth2(t, mailtest.OAuth2Options{})
	dir := t.TempDir()
	cfg := watchConfig(t, dir, "  offline: true\n  from: Serwis <serwis@example.com>\n")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(b), "  tls: none\n", "  tls: none\n  ca_file: nosuch.pem\n", 1)
	bad = strings.Replace(bad, "ledger: state/ledger.db\n", "ledger: nosuchdir/ledger.db\n", 1)
	writeTestFile(t, cfg, bad)
	code, stdout, stderr := runArgs(t, "check", "--json", "--config", cfg)
	var r checkReport
	if err := json.Unmarshal([]byte(stdout), &r); err != nil || code != exitUsage || stderr != "" {
		t.Fatalf("exit %d (want %d), %v\nstdout %s\nstderr %s", code, exitUsage, err, stdout, stderr)
	}
	if r.Valid || len(r.Problems) != 2 || !strings.Contains(r.Problems[0]+r.Problems[1], "imap.ca_file") || !strings.Contains(r.Problems[0]+r.Problems[1], "ledger") {
		t.Errorf("valid %v, problems %q; want the ca_file and the ledger directory", r.Valid, r.Problems)
	}

	// A secret the endpoint refuses: the token problem, and the report so far.
	writeTestFile(t, filepath.Join(dir, "client.secret"), "wrong\n")
	oauth := "  oauth2:\n    token_url: " + o.TokenURL + "\n    client_id: " + o.ClientID +
		"\n    client_secret_file: client.secret\n    scopes: [https://outlook.office365.com/.default]\n"
	writeTestFile(t, cfg, strings.Replace(string(b), "  password: secret\n", oauth, 1))
	code, stdout, _ = runArgs(t, "check", "--json", "--config", cfg)
	r = checkReport{}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil || code == 0 {
		t.Fatalf("refused secret: exit %d, %v\n%s", code, err, stdout)
	}
	if r.Valid || len(r.Problems) == 0 || !strings.Contains(strings.Join(r.Problems, "\n"), "imap.oauth2") || r.Config == nil || len(r.OAuth2) != 0 {
		t.Errorf("refused secret: %+v", r)
	}
}
