package main

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A photo reaches the offline stand-in within the caps; the outcome and
// the dry run's text lines say what was sent, and the stand-in's reply says
// it did not look at it.
func TestProcessPhotoOffline(t *testing.T) {
	dir := t.TempDir()
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, 200)...)
	raw := "From: Anna <anna@customer.example>\r\nTo: serwis@example.com\r\nSubject: Reklamacja ekspresu\r\n" +
		"Message-ID: <photo-offline@customer.example>\r\nDate: Mon, 16 Nov 2026 09:12:44 +0100\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" +
		"Dzień dobry, ekspres nie grzeje. Numer seryjny jest na zdjęciu tabliczki.\r\n" +
		"--b1\r\nContent-Type: image/png\r\nContent-Disposition: attachment; filename=\"tabliczka.png\"\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
		base64.StdEncoding.EncodeToString(png) + "\r\n" +
		"--b1\r\nContent-Type: application/x-msdownload\r\nContent-Disposition: attachment; filename=\"setup.exe\"\r\n\r\nMZ\r\n--b1--\r\n"
	eml := filepath.Join(dir, "photo.eml")
	if err := os.WriteFile(eml, []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	outbox := filepath.Join(dir, "outbox")
	code, stdout, stderr := runCLI(t, "", "process", "--json", "--offline", "--warranty-csv", "../../examples/warranty.csv",
		"--tickets-db", filepath.Join(dir, "t.db"), "--outbox", outbox, eml)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{`{"name":"tabliczka.png","type":"image/png","size":216,"sent":true}`,
		`{"name":"setup.exe","type":"application/x-msdownload","size":2,"sent":false,"not_sent":"type_not_allowed"}`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("outcome lacks %s:\n%s", want, stdout)
		}
	}
	files, _ := filepath.Glob(filepath.Join(outbox, "*.eml"))
	if len(files) != 1 {
		t.Fatalf("outbox: %v", files)
	}
	reply, _ := os.ReadFile(files[0])
	if !strings.Contains(string(reply), "nie ogl") { // quoted-printable may split the rest
		t.Errorf("the stand-in's reply does not say it did not read the photo:\n%s", reply)
	}
	code, stdout, stderr = runCLI(t, "", "process", "--dry-run", "--offline", "--warranty-csv", "../../examples/warranty.csv", eml)
	if code != 0 || !strings.Contains(stdout, `attachment "tabliczka.png" image/png 216 bytes: sent to the model`) ||
		!strings.Contains(stdout, `attachment "setup.exe" application/x-msdownload 2 bytes: not sent: type_not_allowed`) {
		t.Errorf("dry run (exit %d) does not list the attachments:\n%s\n%s", code, stdout, stderr)
	}
}

// The caps are settings: flags for process, pipeline.attachments.* for
// watch; each one changes what the model is sent.
func TestProcessAttachmentSettings(t *testing.T) {
	dir := t.TempDir()
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, 200)...)
	raw := "From: Anna <anna@customer.example>\r\nTo: serwis@example.com\r\nSubject: Reklamacja ekspresu\r\n" +
		"Message-ID: <photo-settings@customer.example>\r\nDate: Mon, 16 Nov 2026 09:12:44 +0100\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" +
		"Dzień dobry, ekspres nie grzeje. Numer seryjny jest na zdjęciu tabliczki.\r\n" +
		"--b1\r\nContent-Type: image/png\r\nContent-Disposition: attachment; filename=\"tabliczka.png\"\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
		base64.StdEncoding.EncodeToString(png) + "\r\n--b1--\r\n"
	eml := filepath.Join(dir, "photo.eml")
	if err := os.WriteFile(eml, []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--attachment-types", "application/pdf"}, `"sent":false,"not_sent":"type_not_allowed"`},
		{[]string{"--max-attachment-bytes", "100"}, `"sent":false,"not_sent":"over_max_bytes"`},
		{[]string{"--max-attachments", "-1"}, `"sent":false,"not_sent":"disabled"`},
		{nil, `"size":216,"sent":true`},
	} {
		args := append([]string{"process", "--json", "--dry-run", "--offline", "--warranty-csv", "../../examples/warranty.csv"}, tc.flags...)
		code, stdout, stderr := runCLI(t, "", append(args, eml)...)
		if code != 0 || !strings.Contains(stdout, tc.want) {
			t.Errorf("%v: exit %d, outcome lacks %s:\n%s\n%s", tc.flags, code, tc.want, stdout, stderr)
		}
	}
	if code, _, stderr := runCLI(t, "", "process", "--offline", "--max-attachment-bytes", "0", eml); code != 2 || !strings.Contains(stderr, "max-attachment-bytes") {
		t.Errorf("--max-attachment-bytes 0: exit %d, want 2 naming the flag:\n%s", code, stderr)
	}
}
