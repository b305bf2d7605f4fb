package e2e

// Memory benchmarks of `triage process`: they build the real binary, run it
// as a child process over inputs generated in a temporary directory, and
// report its peak resident set size (getrusage ru_maxrss of the child, as
// the kernel measured it). Run them with
//
//	go test -run '^$' -bench RSS -benchtime 1x ./e2e
//
// (make bench runs every benchmark). Targets: 20,000 emails in
// <= 64 MiB; one email with an 18 MB attachment in <= 3x its raw size plus
// the baseline (the peak of the same run over one small email).

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// peakRSS runs `triage process` over files (relative to dir) and returns
// the child's peak RSS in bytes and its exit code.
//
// Linux starts a child's ru_maxrss at the resident size of the process that
// spawned it (os/exec's vfork shares the parent's memory until exec), so a
// child of this test binary, which holds the generated inputs, would report
// at least the test's own peak. The child is therefore spawned by a fresh,
// small copy of the test binary (rssRunner, below), which reports the
// child's getrusage figures.
func peakRSS(b *testing.B, bin, dir string, files ...string) (int64, int) {
	b.Helper()
	rss, _, code := measureProcess(b, bin, dir, []string{"--concurrency", "4"}, files...)
	return rss, code
}

// measureProcess runs `triage process --offline --json` with flags over files
// (relative to dir) under the rss runner and returns the child's peak RSS
// in bytes, its CPU time (user + system) in ms and its exit code; an exit
// code other than 0 or 1 (some email failed, which is fine here) fails b.
func measureProcess(b *testing.B, bin, dir string, flags []string, files ...string) (rss, cpuMS int64, code int) {
	return measureRun(b, bin, dir, runOptions{flags: flags}, files...)
}

// runOptions vary a measured run.
type runOptions struct {
	flags []string
	// model is the address of a stand-in for Gemini, served from the
	// benchmark's own process; empty: the built-in offline model (--offline),
	// inside the measured process.
	model string
	// state is the directory under dir for the outbox and tickets.db
	// (default dir itself).
	state string
}

// measureRun is measureProcess with the options.
func measureRun(b *testing.B, bin, dir string, o runOptions, files ...string) (rss, cpuMS int64, code int) {
	b.Helper()
	u := measureUsage(b, bin, dir, o, files...)
	return u.rss, u.userMS + u.sysMS, u.code
}

// usage is what the rss runner reports of a run: peak RSS in bytes, user
// and system CPU time in ms, and the exit code.
type usage struct {
	rss, userMS, sysMS int64
	code               int
}

// measureUsage is measureRun with the CPU time as user and system time.
func measureUsage(b *testing.B, bin, dir string, o runOptions, files ...string) usage {
	b.Helper()
	if err := os.MkdirAll(filepath.Join(dir, o.state), 0o755); err != nil {
		b.Fatal(err)
	}
	args := append([]string{bin, "process", "--json"}, o.flags...)
	env := []string{rssRunnerEnv + "=1", "PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	if o.model == "" {
		args = append(args, "--offline")
	} else {
		env = append(env, "GEMINI_API_KEY=bench", "GOOGLE_GEMINI_BASE_URL="+o.model)
	}
	args = append(args, "--warranty-csv", "warranty.csv",
		"--tickets-db", filepath.Join(o.state, "tickets.db"), "--outbox", filepath.Join(o.state, "outbox"))
	cmd := exec.Command(os.Args[0], append(args, files...)...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("rss runner: %v\n%s", err, stderr.String())
	}
	var u usage
	if _, err := fmt.Sscanf(stdout.String(), "maxrss_kib=%d exit=%d user_ms=%d sys_ms=%d", &u.rss, &u.code, &u.userMS, &u.sysMS); err != nil {
		b.Fatalf("rss runner said %q: %v\n%s", stdout.String(), err, stderr.String())
	}
	if u.code != 0 && u.code != 1 {
		b.Fatalf("triage process exited %d:\n%s", u.code, stderr.String())
	}
	u.rss *= 1024
	return u
}

const rssRunnerEnv = "TRIAGE_RSS_RUNNER"

// rssRunner: when this test binary is started with TRIAGE_RSS_RUNNER=1 it
// runs its arguments as a command (stdout discarded, stderr passed on; of
// the environment, PATH, HOME and the Gemini key and address) and
// prints the command's peak RSS (KiB, as getrusage reports it on Linux),
// exit code and user and system CPU time, then exits.
func init() {
	if os.Getenv(rssRunnerEnv) == "" {
		return
	}
	args := os.Args[1:]
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for _, k := range []string{"GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"} {
		if v := os.Getenv(k); v != "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	err := cmd.Run()
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "rss runner:", err)
		os.Exit(2)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		fmt.Fprintln(os.Stderr, "rss runner: no getrusage on this platform")
		os.Exit(2)
	}
	user, sys := time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
	fmt.Printf("maxrss_kib=%d exit=%d user_ms=%d sys_ms=%d\n", ru.Maxrss, cmd.ProcessState.ExitCode(), user.Milliseconds(), sys.Milliseconds())
	os.Exit(0)
}

func benchDir(b *testing.B) string {
	dir := b.TempDir()
	csv := "serial_number,status,expiration_date,product\nSN-48213-PL,valid,2099-05-31,Ekspres\n"
	if err := os.WriteFile(filepath.Join(dir, "warranty.csv"), []byte(csv), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// smallEmails writes n small emails to dir and returns their file names.
func smallEmails(b *testing.B, dir string, n int) []string {
	b.Helper()
	files := make([]string, n)
	for i := range files {
		files[i] = fmt.Sprintf("%05d.eml", i)
		if err := os.WriteFile(filepath.Join(dir, files[i]), []byte(smallEmail(i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return files
}

func smallEmail(i int) string {
	return fmt.Sprintf("From: Klient %d <klient%d@customer.example>\r\nTo: serwis@example.com\r\nSubject: Reklamacja %d\r\n"+
		"Message-ID: <bench-%d@customer.example>\r\nDate: Mon, 16 Nov 2026 09:12:44 +0100\r\n"+
		"Content-Type: text/plain; charset=utf-8\r\n\r\nDzień dobry, mój ekspres SN-48213-PL nie grzeje. Proszę o naprawę.\r\n", i, i, i, i)
}

// BenchmarkProcessRSS20k: 20,000 emails in one run; peak RSS must not grow
// with the number of inputs (target <= 64 MiB).
func BenchmarkProcessRSS20k(b *testing.B) {
	const n = 20000
	bin := triageBinary(b)
	dir := benchDir(b)
	files := smallEmails(b, dir, n)
	for range b.N {
		os.RemoveAll(filepath.Join(dir, "outbox"))
		os.Remove(filepath.Join(dir, "tickets.db"))
		peak, _ := peakRSS(b, bin, dir, files...)
		b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
		b.Logf("process of %d emails: peak RSS %.1f MiB (target <= 64 MiB)", n, float64(peak)/(1<<20))
	}
}

// writeBase64Lines writes data to msg in base64, in lines of 76 characters
// as mail writers wrap it, each ended by CRLF.
func writeBase64Lines(msg *strings.Builder, data []byte) {
	enc := base64.StdEncoding.EncodeToString(data)
	for len(enc) > 76 {
		msg.WriteString(enc[:76] + "\r\n")
		enc = enc[76:]
	}
	msg.WriteString(enc + "\r\n")
}

// BenchmarkProcessRSSAttachment: one email with an 18 MB attachment; peak
// RSS over the baseline (one small email) relative to the raw size
// (target <= 3).
func BenchmarkProcessRSSAttachment(b *testing.B) {
	bin := triageBinary(b)
	dir := benchDir(b)
	if err := os.WriteFile(filepath.Join(dir, "small.eml"), []byte(smallEmail(0)), 0o644); err != nil {
		b.Fatal(err)
	}
	att := make([]byte, 18_000_000)
	rand.Read(att)
	var msg strings.Builder
	msg.WriteString("From: Anna <anna@customer.example>\r\nTo: serwis@example.com\r\nSubject: Reklamacja ze zdjęciami\r\n" +
		"Message-ID: <bench-att@customer.example>\r\nDate: Mon, 16 Nov 2026 09:12:44 +0100\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" +
		"Mój ekspres SN-48213-PL nie grzeje, zdjęcia w załączniku.\r\n--b1\r\nContent-Type: application/zip\r\n" +
		"Content-Disposition: attachment; filename=\"zdjecia.zip\"\r\nContent-Transfer-Encoding: base64\r\n\r\n")
	writeBase64Lines(&msg, att)
	msg.WriteString("--b1--\r\n")
	raw := msg.String()
	if err := os.WriteFile(filepath.Join(dir, "big.eml"), []byte(raw), 0o644); err != nil {
		b.Fatal(err)
	}
	for range b.N {
		base, _ := peakRSS(b, bin, dir, "small.eml")
		peak, _ := peakRSS(b, bin, dir, "big.eml")
		ratio := float64(peak-base) / float64(len(raw))
		b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
		b.ReportMetric(float64(base)/(1<<20), "baseline-MiB")
		b.ReportMetric(ratio, "x-raw-over-baseline")
		b.Logf("18 MB attachment (raw %.1f MiB): peak RSS %.1f MiB, baseline %.1f MiB: (peak-baseline)/raw = %.2f (target <= 3); peak/raw = %.2f",
			float64(len(raw))/(1<<20), float64(peak)/(1<<20), float64(base)/(1<<20), ratio, float64(peak)/float64(len(raw)))
	}
}

// languageTexts are short warranty emails in the 13 default languages and
// three of the neighbours (Hungarian, Dutch, Portuguese): a run over them
// loads every language model the detector can load.
var languageTexts = []string{
	"Dzień dobry, mój ekspres SN-48213-PL nie grzeje. Proszę o naprawę.",
	"Hello, my coffee machine SN-48213-PL stopped heating. Please repair it.",
	"Guten Tag, meine Kaffeemaschine SN-48213-PL heizt nicht mehr. Bitte reparieren.",
	"Bonjour, ma machine à café SN-48213-PL ne chauffe plus. Merci de la réparer.",
	"Hola, mi cafetera SN-48213-PL ya no calienta. Por favor, repárenla.",
	"Buongiorno, la mia macchina da caffè SN-48213-PL non scalda più. Per favore ripararla.",
	"Dobrý den, můj kávovar SN-48213-PL nehřeje. Prosím o opravu.",
	"Добрий день, моя кавоварка SN-48213-PL не гріє. Прошу відремонтувати.",
	"Здравствуйте, моя кофеварка SN-48213-PL не греет. Прошу отремонтировать.",
	"Tere, minu kohvimasin SN-48213-PL ei soojenda. Palun parandage.",
	"こんにちは。コーヒーメーカーSN-48213-PLが温まりません。修理をお願いします。",
	"안녕하세요. 커피 머신 SN-48213-PL이 데워지지 않습니다. 수리 부탁드립니다.",
	"您好，我的咖啡机SN-48213-PL不加热了。请维修。",
	"Jó napot, a kávéfőzőm SN-48213-PL nem melegít. Kérem javítsák meg.",
	"Goedendag, mijn koffiezetapparaat SN-48213-PL warmt niet meer op. Graag repareren.",
	"Olá, a minha máquina de café SN-48213-PL não aquece. Por favor reparem.",
}

// BenchmarkProcessRSSLanguages: 10,000 emails in 16 languages in one run,
// so that every language model is loaded; it reports the peak RSS (the
// figure docs/bounds.md gives for the language detector).
func BenchmarkProcessRSSLanguages(b *testing.B) {
	const n = 10000
	bin := triageBinary(b)
	dir := benchDir(b)
	files := make([]string, n)
	for i := range files {
		files[i] = fmt.Sprintf("%05d.eml", i)
		raw := fmt.Sprintf("From: Klient %d <klient%d@customer.example>\r\nTo: serwis@example.com\r\nSubject: SN-48213-PL\r\n"+
			"Message-ID: <lang-%d@customer.example>\r\nDate: Mon, 16 Nov 2026 09:12:44 +0100\r\n"+
			"Content-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n", i, i, i, languageTexts[i%len(languageTexts)])
		if err := os.WriteFile(filepath.Join(dir, files[i]), []byte(raw), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for range b.N {
		os.RemoveAll(filepath.Join(dir, "outbox"))
		os.Remove(filepath.Join(dir, "tickets.db"))
		peak, _ := peakRSS(b, bin, dir, files...)
		b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
		b.Logf("process of %d emails in %d languages: peak RSS %.1f MiB", n, len(languageTexts), float64(peak)/(1<<20))
	}
}
