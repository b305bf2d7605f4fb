package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"

	"triage/internal/testkit/mailtest"
)

// exitUsageForTest mirrors cmd/triage's exitUsage.
const exitUsageForTest = 2

// TestBinaryFolderMissing: the real binary with a sent_folder the server
// does not have (a typo of the folder it marks \Sent). Both watch --once
// and the daemon stop at connect with exit 2, and the error names the
// setting, the folders that exist and the one the server marks \Sent;
// nothing is answered and no folder is created.
func TestBinaryFolderMissing(t *testing.T) {
	srv := mailtest.StartIMAP(t, mailtest.IMAPOptions{SpecialUse: map[string]imap.MailboxAttr{"Sent Items": imap.MailboxAttrSent}})
	w := newWorldFor(t, srv.Target(), "")
	cfg, err := os.ReadFile(w.config)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, w.config, strings.Replace(string(cfg), "sent_folder: Sent\n", "sent_folder: Sent Itmes\n", 1))
	w.deliver(0)

	for _, args := range [][]string{{"--once"}, nil} {
		code, out := w.run(append([]string{"watch", "--config", w.config}, args...)...)
		if code != exitUsageForTest {
			t.Errorf("watch %v: exit %d, want %d\n%s", args, code, exitUsageForTest, out)
		}
		var last map[string]any // --log-format json: the final error is a JSON line
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var rec map[string]any
			if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "triage watch stopped" {
				last = rec
			}
		}
		msg, _ := last["err"].(string)
		for _, want := range []string{w.config, "invalid configuration", `imap.sent_folder "Sent Itmes": no such folder`,
			`its folders are "INBOX", "Sent", "Sent Items"`, `use "Sent Items", the folder the server marks \Sent`} {
			if !strings.Contains(msg, want) {
				t.Errorf("watch %v: the final error does not say %q:\n%s", args, want, out)
			}
		}
		if last["exit_status"] != float64(exitUsageForTest) {
			t.Errorf("watch %v: exit_status %v in the final line, want %d", args, last["exit_status"], exitUsageForTest)
		}
	}
	if n := len(w.sink.Messages()); n != 0 {
		t.Errorf("%d replies sent, want none", n)
	}
	if w.tgt.HasFolder(t, "Sent Itmes") {
		t.Error("the misspelt folder was created")
	}
}
