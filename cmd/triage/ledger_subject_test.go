package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"triage/internal/ledger"
)

// triage ledger shows subjects decoded (RFC 2047, in any charset go-message
// knows), in the table and in --json; a subject that does not decode is
// shown as stored.
func TestLedgerSubjectsDecoded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Open(context.Background(), ledger.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	subjects := map[uint32]string{
		1: "=?ISO-8859-2?B?WmG/87PmIGfqtmyx?=",        // Zażółć gęślą
		2: "=?windows-1250?Q?Reklamacja_=9Ciwiatka?=", // 0x9C is ś in windows-1250
		3: "=?bogus?Q?x?= plain",
	}
	for uid, subj := range subjects {
		e := ledger.Entry{Loc: ledger.Loc{Account: "a", Mailbox: "INBOX", UIDValidity: 1, UID: uid}, Key: "k", Subject: subj, State: ledger.StateReplied}
		if err := l.Record(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	for _, args := range [][]string{{"ledger", "--ledger", path}, {"ledger", "--ledger", path, "--json"}} {
		code, out, stderr := runCLI(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, stderr)
		}
		for _, want := range []string{"Zażółć gęślą", "Reklamacja śiwiatka", "=?bogus?Q?x?= plain"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v does not show %q:\n%s", args, want, out)
			}
		}
		if strings.Contains(out, "=?ISO-8859-2?") {
			t.Errorf("%v shows an encoded subject:\n%s", args, out)
		}
	}
}
