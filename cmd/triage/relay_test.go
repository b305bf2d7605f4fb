package main

import (
	"strings"
	"testing"

	"triage/internal/dispatcher"
	"triage/internal/message"
	"triage/internal/testkit/mailtest"
)

// A stranger's Reply-To, end to end in watch (the in-memory IMAP server, the
// SMTP sink, the offline model): a message that names a third party in
// Reply-To and a phishing line in Subject gets its reply at the From
// address only; the same message authenticated by the configured receiving
// server (its Authentication-Results on top) is answered at the Reply-To,
// under a neutral subject.
func TestWatchAnswersAStrangersReplyToOnlyWhenAuthenticated(t *testing.T) {
	noDefaultConfig(t)
	sink := mailtest.StartSMTPSink(t, mailtest.SMTPOptions{})
	e := newWatchEnv(t, "  trusted_authserv_ids: [mx.example.com]\nsmtp: {addr: "+sink.Addr+", tls: none}\n")
	phish := func(id, auth string) []byte {
		return []byte(auth + "From: Anna Nowak <anna.nowak@example.pl>\r\nReply-To: victim@bank.example\r\nTo: serwis@example.com\r\n" +
			"Subject: Your account is locked: log in at http://bank.evil.example\r\nDate: Mon, 16 Nov 2026 09:12:44 +0100\r\n" +
			"Message-ID: <" + id + "@example.pl>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" +
			"Dzień dobry, mój ekspres przestał grzać wodę. Numer seryjny: SN-48213-PL.\r\n")
	}
	e.srv.Append(t, "INBOX", phish("forged-1", "Authentication-Results: mx.example.com; dmarc=pass header.from=firm.example\r\n"))
	if code, _, stderr := e.run(t, "watch", "--config", e.config, "--once"); code != 0 {
		t.Fatalf("watch exit %d\n%s", code, stderr)
	}
	e.srv.Append(t, "INBOX", phish("real-2", "Authentication-Results: mx.example.com; dkim=pass (2048-bit key; unprotected) header.d=example.pl\r\n"))
	if code, _, stderr := e.run(t, "watch", "--config", e.config, "--once"); code != 0 {
		t.Fatalf("watch exit %d\n%s", code, stderr)
	}
	var got []string
	for _, m := range sink.Messages() {
		pm, err := message.Parse(m.Data)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.Join(m.To, ",")+" "+pm.Subject)
	}
	if len(got) != 2 || got[0] != "anna.nowak@example.pl Re: Your account is locked: log in at http://bank.evil.example [TKT-000001]" ||
		got[1] != "victim@bank.example Re: "+dispatcher.NeutralSubject("pl")+" [TKT-000002]" {
		t.Errorf("mailed %q; want the unauthenticated one at From, the authenticated one at the Reply-To under a neutral subject", got)
	}
}
