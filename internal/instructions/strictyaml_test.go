package instructions

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type server struct {
	Addr string `yaml:"addr"`
	User string `yaml:"user"`
}

type config struct {
	IMAP struct {
		server  `yaml:",inline"`
		Mailbox string `yaml:"mailbox"`
	} `yaml:"imap"`
	Interval time.Duration `yaml:"interval"`
	Idle     *bool         `yaml:"idle"`
	Pipeline struct {
		WarrantyCSV string         `yaml:"warranty_csv"`
		Staff       []string       `yaml:"staff"`
		MaxTurns    int            `yaml:"max_turns"`
		Extra       map[string]any `yaml:"extra"`
	} `yaml:"pipeline"`
	Skip string `yaml:"-"`
}

func TestDecodeReportsEverything(t *testing.T) {
	doc := `imap:
  addr: localhost:143
  usr: x
interval: soon
idle: maybe
warranty_csv: top.csv
pipeline:
  warranty_cvs: a.csv
  staff: one@example.com
  max_turns: ten
  extra: {anything: [goes]}
`
	var c config
	err := DecodeYAML([]byte(doc), &c)
	var e *YAMLError
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want *YAMLError", err)
	}
	want := []string{
		`line 3: unknown field "usr" in imap; valid: addr, mailbox, user`,
		`line 4: interval: "soon" is not a duration (e.g. 30s, 5m)`,
		`line 5: idle: "maybe" is not true or false`,
		`line 6: unknown field "warranty_csv"; valid: idle, imap, interval, pipeline`,
		`line 8: unknown field "warranty_cvs" in pipeline; valid: extra, max_turns, staff, warranty_csv`,
		`line 9: pipeline.staff: want a list, got "one@example.com"`,
		`line 10: pipeline.max_turns: "ten" is not a whole number`,
	}
	if diff := cmp.Diff(want, e.Problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	for _, p := range e.Problems {
		if strings.Contains(p, "struct") || strings.Contains(p, "time.Duration") {
			t.Errorf("Go type leaked into %q", p)
		}
	}
}

func TestDecodeValid(t *testing.T) {
	doc := "imap: {addr: h:1, user: u, mailbox: INBOX}\ninterval: 2m\nidle: false\npipeline:\n  staff: [a@x]\n  max_turns: 0x10\n  warranty_csv:\n"
	var c config
	if err := DecodeYAML([]byte(doc), &c); err != nil {
		t.Fatal(err)
	}
	if c.IMAP.Addr != "h:1" || c.IMAP.Mailbox != "INBOX" || c.Interval != 2*time.Minute || c.Idle == nil || *c.Idle || c.Pipeline.MaxTurns != 16 || len(c.Pipeline.Staff) != 1 {
		t.Errorf("decoded %+v", c)
	}
	if err := DecodeYAML(nil, &c); err != nil {
		t.Errorf("empty document: %v", err)
	}
	if err := DecodeYAML([]byte("imap: [unclosed"), &c); err == nil || strings.HasPrefix(err.Error(), "yaml:") {
		t.Errorf("syntax error = %v, want a message without the yaml: prefix", err)
	}
}
