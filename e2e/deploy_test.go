package e2e

// The deploy path as documented: the cron lines of README.md and
// docs/watch.md run as written (paths pointed at a temporary directory), and
// the systemd install steps (deploy/install.sh) into a temporary root.

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"triage/internal/testkit/mailtest"
)

// cronLines returns the documented crontab lines (schedule "*/5 * * * *")
// of file, without the schedule and, for /etc/cron.d lines, the user.
func cronLines(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sched := regexp.MustCompile(`^\s*\*/5 \* \* \* \*\s+`)
	for sc.Scan() {
		line := sc.Text()
		loc := sched.FindStringIndex(line)
		if loc == nil {
			continue
		}
		cmd := line[loc[1]:]
		if user, rest, ok := strings.Cut(cmd, "  "); ok && !strings.ContainsAny(user, " /;") {
			cmd = strings.TrimSpace(rest) // /etc/cron.d format: the sixth field is the user
		}
		out = append(out, cmd)
	}
	return out
}

func TestDocumentedCronLines(t *testing.T) {
	var lines []string
	for _, f := range []string{"../README.md", "../docs/watch.md"} {
		got := cronLines(t, f)
		if len(got) == 0 {
			t.Fatalf("%s documents no cron line", f)
		}
		lines = append(lines, got...)
	}
	for i, line := range lines {
		t.Run(strings.Fields(line)[0], func(t *testing.T) {
			w := newWorld(t, "")
			w.deliver(i)
			// The env file as deploy/install.sh writes it, filled in.
			env := filepath.Join(w.dir, "env")
			writeFile(t, env, "# KEY=value lines\nTRIAGE_IMAP_PASSWORD="+w.tgt.Password+"\nTRIAGE_SMTP_PASSWORD=relaypw\nGEMINI_API_KEY=\n")
			logFile := filepath.Join(w.dir, "watch.log")
			run := strings.NewReplacer(
				"/usr/local/bin/triage", triageBinary(t),
				"/etc/triage/env", env,
				"/etc/triage/triage.yaml", w.config,
				"/var/log/triage/watch.log", logFile,
			).Replace(line)
			// cron runs the line with /bin/sh and a minimal environment.
			cmd := exec.Command("/bin/sh", "-c", run)
			cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + w.dir, "SHELL=/bin/sh", "LOGNAME=triage"}
			cmd.Dir = w.dir
			out, err := cmd.CombinedOutput()
			log, _ := os.ReadFile(logFile)
			if err != nil {
				t.Fatalf("documented cron line %q failed: %v\n%s\nlog:\n%s", line, err, out, log)
			}
			if n := len(w.sink.Messages()); n != 1 {
				t.Errorf("replies sent: %d, want 1; log:\n%s", n, log)
			}
			for _, l := range strings.Split(strings.TrimSpace(string(log)), "\n") {
				if !strings.HasPrefix(l, "{") {
					t.Errorf("--log-format json wrote a line that is not JSON: %q", l)
				}
			}
		})
	}
}

// The cron line as it was documented before fails: sourcing KEY=value lines
// does not export them, so triage never sees the password.
func TestOldCronLineFails(t *testing.T) {
	w := newWorld(t, "")
	env := filepath.Join(w.dir, "env")
	writeFile(t, env, "TRIAGE_IMAP_PASSWORD="+w.tgt.Password+"\n")
	cmd := exec.Command("/bin/sh", "-c", ". "+env+"; "+triageBinary(t)+" watch --config "+w.config+" --once")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + w.dir}
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(out), "no IMAP password or token") {
		t.Errorf("old recipe: exit %d (%v), want 2 'no IMAP password or token':\n%s", code, err, out)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// unitFiles returns the files a unit names: ExecStart's program and its
// --config, --env-file and --token-file, EnvironmentFile, and Documentation=file:// targets.
func unitFiles(t *testing.T, unit string) []string {
	t.Helper()
	b, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		switch k {
		case "ExecStart":
			f := strings.Fields(v)
			files = append(files, strings.TrimLeft(f[0], "-@:+!"))
			for i := range f[:len(f)-1] {
				if f[i] == "--config" || f[i] == "--env-file" || f[i] == "--token-file" {
					files = append(files, f[i+1])
				}
			}
		case "EnvironmentFile":
			if !strings.HasPrefix(v, "-") { // "-": optional
				files = append(files, v)
			}
		case "Documentation":
			for _, d := range strings.Fields(v) {
				if p, ok := strings.CutPrefix(d, "file://"); ok {
					files = append(files, p)
				}
			}
		}
	}
	return files
}

// configFiles returns the files the installed configuration names (the keys
// a daemon reads at start; directories for state are made by systemd).
func configFiles(t *testing.T, config string) []string {
	t.Helper()
	b, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	key := regexp.MustCompile(`(?m)^\s*(warranty_csv|password_file|token_file|instructions):\s*(\S+)`)
	var files []string
	for _, m := range key.FindAllStringSubmatch(string(b), -1) {
		files = append(files, m[2])
	}
	return files
}

func TestSystemdInstall(t *testing.T) {
	root := t.TempDir()
	cmd := exec.Command("/bin/sh", "deploy/install.sh")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "DESTDIR="+root, "TRIAGE_BIN="+triageBinary(t))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("deploy/install.sh: %v\n%s", err, out)
	}
	unit := filepath.Join(root, "etc/systemd/system/triage-watch.service")
	config := filepath.Join(root, "etc/triage/triage.yaml")
	named := append(unitFiles(t, unit), configFiles(t, config)...)
	if len(named) < 5 {
		t.Fatalf("the unit and configuration name only %v", named)
	}
	for _, f := range named {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("named but not installed: %s (%v)", f, err)
		}
	}
	// The template names the same files, and the instance's configuration
	// (brand-b.yaml for triage-watch@brand-b, made by the administrator).
	template := filepath.Join(root, "etc/systemd/system/triage-watch@.service")
	instanceFiles := unitFiles(t, template)
	if !slices.Contains(instanceFiles, "/etc/triage/%i.yaml") {
		t.Errorf("the template names %v, want its instance's /etc/triage/%%i.yaml", instanceFiles)
	}
	writeFile(t, filepath.Join(root, "etc/triage/brand-b.yaml"), "")
	for _, f := range instanceFiles {
		f = strings.ReplaceAll(f, "%i", "brand-b")
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("named by the template but not installed: %s (%v)", f, err)
		}
	}
	// The console's unit names its files, installed; its token is random
	// and long enough for the console to start with it.
	for _, f := range unitFiles(t, filepath.Join(root, "etc/systemd/system/triage-console.service")) {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("named by triage-console.service but not installed: %s (%v)", f, err)
		}
	}
	if tok, err := os.ReadFile(filepath.Join(root, "etc/triage/console.token")); err != nil || len(strings.TrimSpace(string(tok))) != 64 {
		t.Errorf("console token: %v, %d characters; want 64 hex digits", err, len(strings.TrimSpace(string(tok))))
	} else if st, _ := os.Stat(filepath.Join(root, "etc/triage/console.token")); st.Mode().Perm() != 0o640 {
		t.Errorf("console token mode %v; want 0640", st.Mode().Perm())
	}
	if st, err := os.Stat(filepath.Join(root, "etc/triage/env")); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("env file: %v, mode %v; want 0640", err, st)
	}

	// The installed configuration passes triage check once the env file is
	// filled in; the paths it names are read inside the temporary root.
	cfg, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	rooted := strings.NewReplacer(" /etc/triage/", " "+root+"/etc/triage/", " /var/lib/triage", " "+root+"/var/lib/triage").Replace(string(cfg))
	// The script itself must create the state and log directories: nothing
	// here prepares them.
	for _, dir := range []string{"var/lib/triage", "var/log/triage"} {
		if st, err := os.Stat(filepath.Join(root, dir)); err != nil || !st.IsDir() || st.Mode().Perm() != 0o750 {
			t.Errorf("/%s: %v, %v; want a directory, mode 0750", dir, err, st)
		}
	}
	rootedConfig := filepath.Join(root, "etc/triage/rooted.yaml")
	writeFile(t, rootedConfig, rooted)
	envFile := filepath.Join(root, "etc/triage/env")
	env, _ := os.ReadFile(envFile)
	for _, key := range []string{"TRIAGE_IMAP_PASSWORD=", "TRIAGE_SMTP_PASSWORD=", "TRIAGE_OAUTH2_CLIENT_SECRET=", "GEMINI_API_KEY="} {
		if !strings.Contains(string(env), "\n"+key+"\n") {
			t.Errorf("the installed env file has no empty %s line to fill in:\n%s", key, env)
		}
	}
	filled := strings.NewReplacer("TRIAGE_IMAP_PASSWORD=\n", "TRIAGE_IMAP_PASSWORD=pw\n", "TRIAGE_SMTP_PASSWORD=\n", "TRIAGE_SMTP_PASSWORD=pw\n",
		"GEMINI_API_KEY=\n", "GEMINI_API_KEY=key-not-used-by-check\n", "=/usr/local/share/", "="+root+"/usr/local/share/").Replace(string(env))
	writeFile(t, envFile, filled)
	check := exec.Command(filepath.Join(root, "usr/local/bin/triage"), "check", "--env-file", envFile, "--config", rootedConfig)
	check.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + root}
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("triage check of the installed configuration: %v\n%s", err, out)
	}
	// With the env file as installed (no key): refused, naming the way out.
	writeFile(t, envFile, strings.ReplaceAll(string(env), "=/usr/local/share/", "="+root+"/usr/local/share/"))
	check = exec.Command(filepath.Join(root, "usr/local/bin/triage"), "check", "--env-file", envFile, "--config", rootedConfig)
	check.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + root}
	if out, err := check.CombinedOutput(); err == nil || !strings.Contains(string(out), "GEMINI_API_KEY") || !strings.Contains(string(out), "TRIAGE_IMAP_PASSWORD") {
		t.Errorf("check with the unfilled env file: %v\n%s", err, out)
	}

	// systemd-analyze verify, with the host's units beside ours in the root.
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		mailtest.Skip(t, "systemd-analyze not installed (apt-get install systemd): the unit was not verified")
	}
	hostUnits := "/usr/lib/systemd/system"
	if _, err := os.Stat(hostUnits); err != nil {
		hostUnits = "/lib/systemd/system"
	}
	if err := exec.Command("cp", "-r", hostUnits, filepath.Join(root, "usr/lib/systemd/")).Run(); err != nil {
		if err := os.MkdirAll(filepath.Join(root, "usr/lib/systemd"), 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("cp", "-r", hostUnits, filepath.Join(root, "usr/lib/systemd/")).CombinedOutput(); err != nil {
			t.Fatalf("copy host units: %v %s", err, out)
		}
	}
	out, err := exec.Command(analyze, "verify", "--root="+root, "/etc/systemd/system/triage-watch.service").CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	// The console beside the watch units.
	out, err = exec.Command(analyze, "verify", "--root="+root, "/etc/systemd/system/triage-console.service").CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify triage-console.service: %v\n%s", err, out)
	}
	// The template, one process per inbox: an instance of it verifies too.
	out, err = exec.Command(analyze, "verify", "--root="+root, "/etc/systemd/system/triage-watch@brand-b.service").CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify triage-watch@brand-b.service: %v\n%s", err, out)
	}
}
