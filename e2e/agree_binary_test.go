package e2e

// The same mail through `triage process` and through `triage watch` must
// end the same way: watch's ledger records what process's outcome says,
// in the ledger's words (ledger.Resolve).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"triage"
	"triage/internal/clients/mail"
	"triage/internal/ledger"
	"triage/internal/processor"
	"triage/internal/replies"
)

// TestWatchAndProcessAgree runs one set of mail (the sample inbox twice
// with a follow-up, or TRIAGE_AGREE_COPIES times, a sender past the per-sender limit, a customer past
// the notice bound, header edge cases, sixteen languages) through `triage
// process` (an outbox) and through `triage watch --once` (go-imap's memory
// server, an SMTP sink), one message at a time each, with the same
// registry, staff and limits, and checks every message: watch's state and
// reason are ledger.Resolve of process's outcome, the scenario is the
// same, and a reply went to the same address under the same Message-ID.
// watch's hourly cap (global_per_hour) is off: process has none
// (docs/watch.md, "The same mail through watch and process").
func TestWatchAndProcessAgree(t *testing.T) {
	watchAndProcessAgree(t, newWorld(t, agreeConfig))
}

// TestDovecotWatchAndProcessAgree is TestWatchAndProcessAgree against
// Dovecot, which stores and serves the mail as a real server does.
func TestDovecotWatchAndProcessAgree(t *testing.T) {
	tgt, _ := dovecotTarget(t)
	watchAndProcessAgree(t, newWorldFor(t, tgt, agreeConfig))
}

// agreeConfig ends the configuration of the agreement tests: the staff
// process is given too, one message at a time.
const agreeConfig = "  staff: [kierownik@example.com]\nconcurrency: 1\n"

func watchAndProcessAgree(t *testing.T, w *world) {
	cfg, err := os.ReadFile(w.config)
	if err != nil {
		t.Fatal(err)
	}
	limits := fmt.Sprintf("limits:\n  per_sender: %d\n  global_per_hour: -1\n", replies.DefaultPerSenderLimit)
	cfg = []byte(strings.Replace(string(cfg), "limits:\n  per_sender: -1\n  global_per_hour: -1\n", limits, 1))
	if err := os.WriteFile(w.config, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	csv, err := os.ReadFile("../examples/warranty.csv")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.dir, "warranty.csv"), csv, 0o644); err != nil {
		t.Fatal(err)
	}

	mails := agreementMail(t)
	var files []string
	for i, raw := range mails {
		name := fmt.Sprintf("%03d.eml", i)
		if err := os.WriteFile(filepath.Join(w.dir, name), raw, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, name)
		w.tgt.Append(t, "INBOX", raw)
	}

	args := append([]string{"process", "--offline", "--json", "--concurrency", "1", "--warranty-csv", "warranty.csv",
		"--from", "Serwis <serwis@example.com>", "--staff", "kierownik@example.com",
		"--tickets-db", "process-tickets.db", "--outbox", "outbox"}, files...)
	_, out := w.run(args...)
	var outs []processor.Outcome
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var o processor.Outcome
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatalf("process printed %q: %v", line, err)
		}
		outs = append(outs, o)
	}
	if len(outs) != len(mails) {
		t.Fatalf("process printed %d outcomes for %d emails:\n%s", len(outs), len(mails), tail(out, 3000))
	}

	if code, out := w.run("watch", "--config", w.config, "--once"); code != 0 && code != 1 {
		t.Fatalf("watch --once: exit %d\n%s", code, tail(out, 3000))
	}
	entries := map[triage.Key]ledger.Entry{}
	var noID []ledger.Entry
	for _, e := range w.ledgerEntries() {
		entries[e.Key] = e
		if e.MessageID == "" {
			noID = append(noID, e)
		}
	}
	sent := map[string]string{} // Message-ID of each mail the sink accepted: its recipients
	for _, m := range w.sink.Messages() {
		sent[headerOf(m.Data, "Message-ID")] = strings.Join(m.To, ",")
	}

	seen := map[string]int{}
	replied, escalated := 0, 0
	for i, o := range outs {
		what := fmt.Sprintf("%s (%s)", files[i], o.MessageID)
		e, ok := entries[o.Key]
		if !ok && o.MessageID == "" && len(noID) == 1 {
			// Without a Message-ID, watch keys a message by its header
			// (which a renumbered mailbox keeps), process by all its bytes.
			e, ok = noID[0], true
		}
		if !ok {
			t.Errorf("%s: key %q is not in watch's ledger", what, o.Key)
			continue
		}
		var row *replies.Reply
		if o.Reply != nil && !o.Reply.Drafted {
			row = &replies.Reply{Kind: replies.KindReply, State: replies.ReplySent}
		}
		want := ledger.Resolve(ledger.Processed{Status: o.Status, Reason: o.Reason, Escalated: o.Escalated}, row)
		if e.State != want.State || e.Reason != want.Reason || e.Scenario != o.Scenario {
			t.Errorf("%s: watch %s/%s/%s (%s), process %s/%s/%s escalated=%v (%s): want watch %s/%s/%s",
				what, e.State, e.Reason, e.Scenario, e.Detail, o.Status, o.Reason, o.Scenario, o.Escalated, o.Detail,
				want.State, want.Reason, o.Scenario)
		}
		// The reply's Message-ID derives from the key: the same for the
		// same key, and sent to the same address.
		reply := ""
		if r := regexp.MustCompile(`reply=(<[^>]+>)`).FindStringSubmatch(e.Detail); r != nil {
			reply = r[1]
		}
		switch {
		case o.Reply == nil && reply != "":
			t.Errorf("%s: watch sent %s, process sent nothing (%s/%s)", what, reply, o.Status, o.Reason)
		case o.Reply != nil && reply == "":
			t.Errorf("%s: process replied to %s, watch sent nothing (%s/%s)", what, o.Reply.To, e.State, e.Reason)
		case o.Reply != nil && e.Key == o.Key && reply != o.Reply.MessageID:
			t.Errorf("%s: process replied as %s, watch as %s", what, o.Reply.MessageID, reply)
		case o.Reply != nil && sent[reply] != o.Reply.To:
			t.Errorf("%s: process replied to %s, watch to %q", what, o.Reply.To, sent[reply])
		}
		seen[string(e.State)+"/"+string(e.Reason)]++
		if o.Status == triage.StatusReplied {
			replied++
			if o.Escalated {
				escalated++
			}
		}
	}
	t.Logf("%d messages; process: %d replied, %d of them escalated; watch's ledger states: %v",
		len(outs), replied, escalated, seen)
	// The set reaches what it is built to reach.
	for _, s := range []string{"replied/", "needs_human/escalated", "over_limit/per_sender_limit", "over_limit/notice_limit", "skipped/auto_submitted"} {
		if seen[s] == 0 {
			t.Errorf("no message ended %s: the mail set no longer tests it", s)
		}
	}
}

// agreementMail is TestWatchAndProcessAgree's mail, in the order both
// commands handle it.
func agreementMail(t *testing.T) [][]byte {
	t.Helper()
	var out [][]byte
	n := 0
	id := func() string { n++; return fmt.Sprintf("<agree-%d@customer.example>", n) }

	names, err := filepath.Glob("../examples/inbox/*.eml")
	if err != nil || len(names) == 0 {
		t.Fatalf("the sample inbox: %v", err)
	}
	sample := map[string][]byte{}
	for _, name := range names {
		raw, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		sample[filepath.Base(name)] = raw
	}
	followUp, err := os.ReadFile("../examples/inbox/follow-ups/14-follow-up-pl.eml")
	if err != nil {
		t.Fatal(err)
	}
	// The sample inbox twice (TRIAGE_AGREE_COPIES times), each copy from
	// its own customers (+copy in the address), then the follow-up of the
	// copy's first message.
	copies := 2
	if v := os.Getenv("TRIAGE_AGREE_COPIES"); v != "" {
		if _, err := fmt.Sscan(v, &copies); err != nil || copies < 1 {
			t.Fatalf("TRIAGE_AGREE_COPIES=%q: want a number of copies, at least 1", v)
		}
	}
	for c := range copies {
		tag := fmt.Sprintf("+c%d@", c)
		var first string
		for _, name := range names {
			raw := sample[filepath.Base(name)]
			mid := id()
			if first == "" {
				first = mid
			}
			out = append(out, rewrite(raw, map[string]string{"Message-ID": mid}, "@", tag))
		}
		out = append(out, rewrite(followUp, map[string]string{"Message-ID": id(), "In-Reply-To": first, "References": first}, "@", tag))
	}
	// One customer writes seven times: the per-sender limit answers five.
	for range 7 {
		out = append(out, rewrite(sample["01-valid-warranty-pl.eml"], map[string]string{"Message-ID": id()}, "@", "+often@"))
	}
	// One angry customer four times: staff hear of three (the notice bound
	// per customer), the fourth waits for a person.
	for range 4 {
		out = append(out, rewrite(sample["14-angry-customer-en.eml"], map[string]string{"Message-ID": id()}, "@", "+angry@"))
	}

	// Header edge cases on a valid-warranty claim.
	body := "Dzień dobry,\r\nmój ekspres do kawy przestał grzać wodę. Numer seryjny: SN-48213-PL.\r\nProszę o pomoc.\r\nAnna\r\n"
	date := "Date: Mon, 16 Nov 2026 09:12:44 +0100\r\n"
	k := 0
	edge := func(extra, text string) []byte {
		k++
		return []byte(fmt.Sprintf("From: Klient %d <edge%d@customer.example>\r\nTo: serwis@example.com\r\nSubject: Reklamacja %d\r\n"+
			"Message-ID: %s\r\n%sMIME-Version: 1.0\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n%s",
			k, k, k, id(), extra, text))
	}
	first := edge(date, body) // answered; the follow-ups below join it
	firstKey := triage.Key("msgid:" + headerOf(first, "Message-ID") + "|edge1@customer.example")
	out = append(out, first,
		edge("", body), // no Date
		edge("Date: Sun, 16 Nov 2031 09:12:44 +0100\r\n", body),
		edge("Date: Mon, 16 Nov 2020 09:12:44 +0100\r\n", body),
		edge("Date: 16 Nov 2026 25:99:44\r\n", body),
		edge(date+"Reply-To: biuro@customer.example\r\n", body),
		edge(date+"Reply-To: someone@elsewhere.example\r\n", body),
		edge(date+"Auto-Submitted: auto-generated\r\n", body),
		edge(date+"X-Autoreply: yes\r\n", body),
		edge(date+"Precedence: bulk\r\n", body),
		edge(date+"Return-Path: <>\r\n", body),
		[]byte(strings.ReplaceAll(string(edge(date, body)), "\r\n", "\n")),
		[]byte(strings.Replace(string(edge(date, "Dzie=F1 dobry,\r\nm=F3j ekspres przesta=B3 grza=E6 wody. Numer seryjny: SN-48213-PL.\r\n")),
			"charset=UTF-8\r\nContent-Transfer-Encoding: 8bit", "charset=ISO-8859-2\r\nContent-Transfer-Encoding: quoted-printable", 1)),
		[]byte(strings.Replace(string(edge(date, body)), "charset=UTF-8", "charset=unknown-8bit", 1)),
		[]byte(regexp.MustCompile(`Message-ID: <[^>]+>\r\n`).ReplaceAllString(string(edge(date, body)), "")),
	)
	own := edge(date, body) // from our own address
	out = append(out, rewrite(own, nil, fmt.Sprintf("edge%d@customer.example", k), "serwis@example.com"))
	// A follow-up naming only our reply's Message-ID, from the same customer.
	ours := mail.MessageIDFor(firstKey, "example.com")
	answer := edge(date+"In-Reply-To: "+ours+"\r\nReferences: "+ours+"\r\n", "Dziękuję. Kiedy ekspres SN-48213-PL wróci z naprawy?\r\n")
	out = append(out, rewrite(answer, nil, fmt.Sprintf("edge%d@", k), "edge1@"))
	// Sixteen languages.
	for i, text := range languageTexts {
		out = append(out, []byte(fmt.Sprintf("From: Client %d <lang%d@customer.example>\r\nTo: serwis@example.com\r\nSubject: SN-48213-PL\r\n"+
			"Message-ID: %s\r\n%sContent-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n", i, i, id(), date, text)))
	}
	return out
}

// rewrite sets the header fields of raw that set names (those it holds)
// and, in its From, replaces the first from with to ("" from: no change).
func rewrite(raw []byte, set map[string]string, from, to string) []byte {
	head, body, ok := strings.Cut(string(raw), "\r\n\r\n")
	nl := "\r\n"
	if !ok {
		head, body, _ = strings.Cut(string(raw), "\n\n")
		nl = "\n"
	}
	lines := strings.Split(head, nl)
	for i, l := range lines {
		name, _, ok := strings.Cut(l, ":")
		if !ok || strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") {
			continue
		}
		for k, v := range set {
			if strings.EqualFold(name, k) {
				lines[i] = k + ": " + v
			}
		}
		if from != "" && strings.EqualFold(name, "From") {
			lines[i] = strings.Replace(l, from, to, 1)
		}
	}
	return []byte(strings.Join(lines, nl) + nl + nl + body)
}
