package watch

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage/internal/testkit/mailtest"
)

// TestArchive reads the mailbox for a replay: the newest Limit messages,
// those received since a day, a message over MaxMessageBytes named and not
// fetched; and nothing on the server changes (no \Seen, no keyword).
func TestArchive(t *testing.T) {
	srv := mailtest.StartIMAP(t, mailtest.IMAPOptions{})
	for i := 1; i <= 5; i++ {
		body := "short"
		if i == 4 {
			body = strings.Repeat("x", 4096)
		}
		srv.Append(t, "INBOX", fmt.Appendf(nil, "From: a%d@example.com\r\nMessage-ID: <m%d@example.com>\r\nSubject: %d\r\n\r\n%s\r\n", i, i, i, body))
	}
	w, err := New(Config{Addr: srv.Addr, TLS: TLSNone, Username: srv.User, Password: srv.Password, DryRun: true, Processor: &fakeProc{}, MaxMessageBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	read := func(opts ArchiveOptions) []string {
		t.Helper()
		var got []string
		err := w.Archive(context.Background(), opts, func(a Archived) error {
			switch {
			case a.Err != nil:
				got = append(got, fmt.Sprintf("%d: %v", a.Loc.UID, a.Err))
			default:
				got = append(got, fmt.Sprintf("%d: %s", a.Loc.UID, strings.SplitN(string(a.Raw), "\r\n", 2)[0]))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	want := []string{"3: From: a3@example.com", "4: watch: support@example.com|INBOX|1|4: 4164 bytes, over max_message_bytes (1024); not read", "5: From: a5@example.com"}
	if diff := cmp.Diff(want, read(ArchiveOptions{Limit: 3})); diff != "" {
		t.Errorf("the newest three (-want +got):\n%s", diff)
	}
	if got := read(ArchiveOptions{Limit: 10, Since: time.Now().AddDate(0, 0, 2)}); len(got) != 0 {
		t.Errorf("since the day after tomorrow: %q, want none", got)
	}
	if got := read(ArchiveOptions{Limit: 10, Since: time.Now().AddDate(0, 0, -1)}); len(got) != 5 {
		t.Errorf("since yesterday: %q, want all five", got)
	}
	for _, m := range srv.Messages(t, "INBOX") {
		if len(m.Flags) != 0 {
			t.Errorf("uid %d has flags %v after Archive, want none", m.UID, m.Flags)
		}
	}
	if err := w.Archive(context.Background(), ArchiveOptions{}, func(Archived) error { return nil }); err == nil {
		t.Errorf("Archive without a Limit: no error")
	}
}
