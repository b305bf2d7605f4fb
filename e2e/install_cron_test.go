package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"triage/internal/testkit/mailtest"
)

// TestInstalledCronLine follows the documented path to the letter in a
// fresh root: deploy/install.sh, the env file filled in, then the cron line
// of docs/watch.md against the configuration the script installed. Only the
// servers are changed (the example's hosts become loopback test servers
// without TLS), the absolute paths are rooted, the metrics port is any free
// one, and the offline model stands in for Gemini (there is no key here).
// Nothing the script should create is prepared by the test.
func TestInstalledCronLine(t *testing.T) {
	root := t.TempDir()
	install := exec.Command("/bin/sh", "deploy/install.sh")
	install.Dir = ".."
	install.Env = append(os.Environ(), "DESTDIR="+root, "TRIAGE_BIN="+triageBinary(t))
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("deploy/install.sh: %v\n%s", err, out)
	}
	imapSrv := mailtest.StartIMAP(t, mailtest.IMAPOptions{User: "serwis@example.com", Password: "imap-pw"})
	sink := mailtest.StartSMTPSink(t, mailtest.SMTPOptions{User: "serwis@example.com", Password: "smtp-pw"})
	w := &world{t: t, tgt: imapSrv.Target(), sink: sink, dir: root}
	in := w.deliver(0)

	config := filepath.Join(root, "etc/triage/triage.yaml")
	cfg, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	rooted := strings.NewReplacer(
		"addr: imap.example.com:993", "addr: "+imapSrv.Addr,
		"addr: smtp.example.com:587", "addr: "+sink.Addr,
		"tls: tls ", "tls: none ", "tls: starttls ", "tls: none ",
		"metrics_addr: 127.0.0.1:9464", "metrics_addr: 127.0.0.1:0",
		" /etc/triage/", " "+root+"/etc/triage/", " /var/lib/triage/", " "+root+"/var/lib/triage/",
		"pipeline:\n", "pipeline:\n  offline: true\n",
	).Replace(string(cfg))
	for _, host := range []string{"imap.example.com", "smtp.example.com", "9464"} {
		if strings.Contains(rooted, host) {
			t.Fatalf("the installed configuration changed: %s not rewritten", host)
		}
	}
	writeFile(t, config, rooted)
	envFile := filepath.Join(root, "etc/triage/env")
	env, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, envFile, strings.NewReplacer("TRIAGE_IMAP_PASSWORD=\n", "TRIAGE_IMAP_PASSWORD=imap-pw\n",
		"TRIAGE_SMTP_PASSWORD=\n", "TRIAGE_SMTP_PASSWORD=smtp-pw\n", "=/usr/local/share/", "="+root+"/usr/local/share/").Replace(string(env)))

	var line string
	for _, l := range cronLines(t, "../docs/watch.md") {
		if strings.Contains(l, "--env-file") {
			line = l
		}
	}
	if line == "" {
		t.Fatal("docs/watch.md documents no cron line with --env-file")
	}
	logFile := filepath.Join(root, "var/log/triage/watch.log")
	run := strings.NewReplacer(
		"/usr/local/bin/triage", filepath.Join(root, "usr/local/bin/triage"),
		"/etc/triage/env", envFile,
		"/etc/triage/triage.yaml", config,
		"/var/log/triage/watch.log", logFile,
	).Replace(line)
	cmd := exec.Command("/bin/sh", "-c", run)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + root, "SHELL=/bin/sh", "LOGNAME=triage"}
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	log, _ := os.ReadFile(logFile)
	if err != nil {
		t.Fatalf("the documented cron line %q against the installed configuration: %v\n%s\nlog:\n%s", line, err, out, log)
	}
	if got := sink.CountByHeader("In-Reply-To")[in.ID]; got != 1 {
		t.Errorf("replies to %s: %d, want 1; log:\n%s", in.ID, got, log)
	}
	for _, f := range []string{"var/lib/triage/ledger.db", "var/lib/triage/tickets.db"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("the run did not keep its state where the installed configuration says: %v", err)
		}
	}
}
