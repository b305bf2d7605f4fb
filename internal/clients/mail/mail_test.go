package mail

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	gomail "github.com/emersion/go-message/mail"
	"github.com/google/go-cmp/cmp"
)

// parsed is what a mail client sees in a rendered reply.
type parsed struct {
	FromName, From, To       string
	Subject                  string
	Date                     time.Time
	MessageID                string
	InReplyTo, References    []string
	AutoSubmitted, Suppress  string
	MIMEVersion, ContentType string
	Charset, CTE             string
	Body                     string
}

func parse(t *testing.T, raw []byte) parsed {
	t.Helper()
	r, err := gomail.CreateReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	h := r.Header
	var p parsed
	from, err := h.AddressList("From")
	if err != nil || len(from) != 1 {
		t.Fatalf("From: %v %v", from, err)
	}
	p.FromName, p.From = from[0].Name, from[0].Address
	to, err := h.AddressList("To")
	if err != nil || len(to) != 1 {
		t.Fatalf("To: %v %v", to, err)
	}
	p.To = to[0].Address
	if p.Subject, err = h.Subject(); err != nil {
		t.Fatal(err)
	}
	if p.Date, err = h.Date(); err != nil {
		t.Fatal(err)
	}
	if p.MessageID, err = h.MessageID(); err != nil {
		t.Fatal(err)
	}
	if p.InReplyTo, err = h.MsgIDList("In-Reply-To"); err != nil {
		t.Fatal(err)
	}
	if p.References, err = h.MsgIDList("References"); err != nil {
		t.Fatal(err)
	}
	p.AutoSubmitted = h.Get("Auto-Submitted")
	p.Suppress = h.Get("X-Auto-Response-Suppress")
	p.MIMEVersion = h.Get("MIME-Version")
	ct, params, err := h.ContentType()
	if err != nil {
		t.Fatal(err)
	}
	p.ContentType, p.Charset = ct, params["charset"]
	p.CTE = h.Get("Content-Transfer-Encoding")
	part, err := r.NextPart()
	if err != nil {
		t.Fatalf("body part: %v", err)
	}
	body, err := io.ReadAll(part.Body)
	if err != nil {
		t.Fatal(err)
	}
	p.Body = string(body)
	return p
}

var date = time.Date(2026, 11, 22, 9, 30, 0, 0, time.FixedZone("CET", 3600))

func TestRender(t *testing.T) {
	polish := "Dzień dobry Panie Łukaszu,\n\ngwarancja urządzenia SN-48213-PL jest ważna do 2027-03-01. " +
		"Zgłoszenie TKT-000123 zostało założone; skontaktujemy się w ciągu dwóch dni roboczych. Źdźbło żółć.\n\nPozdrawiamy\nZespół wsparcia\n"
	tests := []struct {
		name  string
		reply Reply
		want  parsed
	}{
		{
			name: "polish reply in a thread",
			reply: Reply{
				From:       "Dział Obsługi Klienta <support@example.com>",
				To:         "lukasz@example.org",
				Subject:    "Re: Reklamacja — ekspres nie działa (SN-48213-PL)",
				Body:       polish,
				InReplyTo:  "<in-1@example.org>",
				References: []string{"<root@example.org>", "<in-1@example.org>"},
				MessageID:  "<triage-abc@example.com>",
				Date:       date,
			},
			want: parsed{
				FromName:      "Dział Obsługi Klienta",
				From:          "support@example.com",
				To:            "lukasz@example.org",
				Subject:       "Re: Reklamacja — ekspres nie działa (SN-48213-PL)",
				Date:          date,
				MessageID:     "triage-abc@example.com",
				InReplyTo:     []string{"in-1@example.org"},
				References:    []string{"root@example.org", "in-1@example.org"},
				AutoSubmitted: "auto-replied", Suppress: "All", MIMEVersion: "1.0",
				ContentType: "text/plain", Charset: "utf-8", CTE: "quoted-printable",
				Body: strings.ReplaceAll(polish, "\n", "\r\n"),
			},
		},
		{
			name: "ascii, no thread",
			reply: Reply{
				From: "support@example.com", To: "Bob <bob@example.net>", Subject: "Warranty",
				Body: "Hello.", MessageID: "<x@example.com>", Date: date,
			},
			want: parsed{
				From: "support@example.com", To: "bob@example.net", Subject: "Warranty", Date: date,
				MessageID: "x@example.com", AutoSubmitted: "auto-replied", Suppress: "All", MIMEVersion: "1.0",
				ContentType: "text/plain", Charset: "utf-8", CTE: "quoted-printable", Body: "Hello.\r\n",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := Render(&tt.reply)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(bytes.ReplaceAll(raw, []byte("\r\n"), nil), []byte("\n")) {
				t.Errorf("bare LF in output:\n%s", raw)
			}
			head, body, _ := strings.Cut(string(raw), "\r\n\r\n")
			for _, line := range strings.Split(body, "\r\n") {
				if len(line) > 76 {
					t.Errorf("quoted-printable line longer than 76: %q", line)
				}
			}
			for _, line := range strings.Split(head+"\r\n"+body, "\r\n") {
				for _, c := range []byte(line) {
					if c >= 0x80 {
						t.Fatalf("8-bit byte in output line %q", line)
					}
				}
			}
			got := parse(t, raw)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parsed reply (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRenderHeaderOrderAndEncoding(t *testing.T) {
	raw, err := Render(&Reply{From: "Zażółć <a@example.com>", To: "b@example.com", Subject: "Gęś", Body: "x", MessageID: "<m@example.com>", Date: date})
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(string(raw), "\r\n\r\n")
	var names []string
	for _, line := range strings.Split(head, "\r\n") {
		if k, _, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, " ") {
			names = append(names, k)
		}
	}
	want := []string{"From", "To", "Subject", "Date", "Message-Id", "Auto-Submitted", "X-Auto-Response-Suppress", "Mime-Version", "Content-Type", "Content-Transfer-Encoding"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("header order (-want +got):\n%s", diff)
	}
	if !regexp.MustCompile(`(?m)^Subject: =\?(?i:utf-8)\?[QqBb]\?`).MatchString(head) {
		t.Errorf("subject not RFC 2047 encoded:\n%s", head)
	}
	if !regexp.MustCompile(`(?m)^From: =\?(?i:utf-8)\?[QqBb]\?.*\?= <a@example.com>`).MatchString(head) {
		t.Errorf("From name not RFC 2047 encoded:\n%s", head)
	}
}

func TestRenderGeneratesMessageIDAndDate(t *testing.T) {
	r1 := &Reply{From: "support@example.com", To: "b@example.com", Subject: "s", Body: "b"}
	r2 := &Reply{From: "support@example.com", To: "b@example.com", Subject: "s", Body: "b"}
	raw1, err := Render(r1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Render(r2); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^<triage-[0-9a-f]{24}@example\.com>$`).MatchString(r1.MessageID) {
		t.Errorf("generated MessageID %q", r1.MessageID)
	}
	if r1.MessageID == r2.MessageID {
		t.Errorf("two generated IDs are equal: %s", r1.MessageID)
	}
	if r1.Date.IsZero() {
		t.Error("Date not filled in")
	}
	if got := parse(t, raw1).MessageID; "<"+got+">" != r1.MessageID {
		t.Errorf("header Message-ID %q, Reply.MessageID %q", got, r1.MessageID)
	}
}

func TestRenderErrors(t *testing.T) {
	tests := []struct {
		name  string
		reply Reply
		want  string
	}{
		{"bad from", Reply{From: "nope", To: "b@example.com"}, "mail: From"},
		{"two recipients", Reply{From: "a@example.com", To: "b@example.com, c@example.com"}, "mail: To"},
		{"multi-line subject", Reply{From: "a@example.com", To: "b@example.com", Subject: "a\r\nBcc: x@y"}, "single line"},
		{"bad message id", Reply{From: "a@example.com", To: "b@example.com", MessageID: "<a b>"}, "Message-ID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Render(&tt.reply)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestMessageIDFor(t *testing.T) {
	a := MessageIDFor("key-1", "example.com")
	if a != MessageIDFor("key-1", "example.com") {
		t.Error("not deterministic")
	}
	if a == MessageIDFor("key-2", "example.com") {
		t.Error("different keys give the same ID")
	}
	// printf key-1 | sha256sum = be2974546978e3739e6d6da85c4be9f3...
	if want := "<triage-be2974546978e3739e6d6da8@example.com>"; a != want {
		t.Errorf("MessageIDFor = %s, want %s", a, want)
	}
}

func BenchmarkRender(b *testing.B) {
	r := &Reply{
		From: "Dział Wsparcia <support@example.com>", To: "jan@example.org", Subject: "Re: Gwarancja — SN-48213-PL",
		Body:      strings.Repeat("Dzień dobry, gwarancja urządzenia jest ważna do 2027-03-01.\n", 20),
		InReplyTo: "<in@example.org>", References: []string{"<in@example.org>"}, MessageID: "<x@example.com>", Date: date,
	}
	for b.Loop() {
		if _, err := Render(r); err != nil {
			b.Fatal(err)
		}
	}
}

// A staff notice carries Reply-To: the customer, so staff answer them.
func TestRenderReplyTo(t *testing.T) {
	raw, err := Render(&Reply{From: "serwis@example.com", To: "boss@example.com", ReplyTo: "\"Jan \t Kowalski\" <jan@example.com>", Subject: "x", Body: "x",
		MessageID: "<n@example.com>", Date: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "\r\nReply-To: \"Jan Kowalski\" <jan@example.com>\r\n") {
		t.Errorf("no Reply-To:\n%s", raw)
	}
	if _, err := Render(&Reply{From: "serwis@example.com", To: "boss@example.com", ReplyTo: "not an address", Subject: "x", Body: "x"}); err == nil {
		t.Error("a Reply-To that is no address rendered")
	}
}
