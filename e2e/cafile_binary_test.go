package e2e

import (
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"triage/internal/testkit/mailtest"
)

// TestBinaryCAFile: servers whose certificate a private CA signed. Without
// imap.ca_file the run fails naming the host and the setting; with it IMAP
// works, and a reply over SMTP without smtp.ca_file is failed/send_failed
// naming smtp.ca_file; with both the reply goes out.
func TestBinaryCAFile(t *testing.T) {
	serverTLS, _ := mailtest.SelfSigned(t)
	imapSrv := mailtest.StartIMAP(t, mailtest.IMAPOptions{TLS: serverTLS, ImplicitTLS: true})
	w := newWorldFor(t, imapSrv.Target(), "")
	sink := mailtest.StartSMTPSink(t, mailtest.SMTPOptions{User: "relay", Password: "relaypw", TLS: serverTLS})
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: serverTLS.Certificates[0].Certificate[0]})
	writeFile(t, filepath.Join(w.dir, "ca.pem"), string(ca))
	cfg, err := os.ReadFile(w.config)
	if err != nil {
		t.Fatal(err)
	}
	base := strings.NewReplacer(
		w.sink.Addr, sink.Addr,
		"  tls: none\n  user: "+w.tgt.User, "  tls: tls\n  user: "+w.tgt.User+"\n  IMAPCA",
		"  tls: none\n  user: relay", "  tls: starttls\n  user: relay\n  SMTPCA",
	).Replace(string(cfg))
	w.sink = sink
	configure := func(imapCA, smtpCA bool) {
		r := strings.NewReplacer("  IMAPCA", caLine(imapCA), "  SMTPCA", caLine(smtpCA))
		writeFile(t, w.config, r.Replace(base))
	}

	in := w.deliver(0)
	configure(false, false)
	code, out := w.run("watch", "--config", w.config, "--once")
	if code != 1 || !strings.Contains(out, "certificate of 127.0.0.1 is not trusted") || !strings.Contains(out, "imap.ca_file") {
		t.Errorf("IMAP without imap.ca_file: exit %d, want 1 naming the host and imap.ca_file\n%s", code, out)
	}

	configure(true, false)
	code, out = w.run("watch", "--config", w.config, "--once")
	if e := w.entry(in.ID); code != 1 || e.Reason != "send_failed" || !strings.Contains(e.Detail, "smtp.ca_file") || !strings.Contains(e.Detail, "127.0.0.1") {
		t.Errorf("SMTP without smtp.ca_file: exit %d, ledger %s/%s %q; want send_failed naming smtp.ca_file\n%s", code, e.State, e.Reason, e.Detail, out)
	}

	second := w.deliver(1)
	configure(true, true)
	if code, out := w.run("watch", "--config", w.config, "--once"); code != 0 {
		t.Fatalf("with both ca_file settings: exit %d\n%s", code, out)
	}
	if n := sink.CountByHeader("In-Reply-To")[second.ID]; n != 1 {
		t.Errorf("replies to %s over trusted TLS: %d, want 1", second.ID, n)
	}
}

func caLine(on bool) string {
	if on {
		return "  ca_file: ca.pem"
	}
	return ""
}
