package guard

import (
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/message"
	"triage/internal/serial"
)

var cfg = Config{OwnAddresses: []string{"serwis@example.com", " ", "reklamacje@example.com"}, HasSerial: defaultHasSerial}

// defaultHasSerial is the default serial extractor's answer, as the processor wires it.
func defaultHasSerial(text string) bool {
	ex, err := serial.New()
	if err != nil {
		panic(err)
	}
	return len(ex.Extract(text, "")) > 0
}

func TestCheckFixtures(t *testing.T) {
	tests := map[string]Verdict{
		"bounce-return-path":            {true, triage.ReasonBounce, "Return-Path: <>"},
		"auto-submitted-auto-replied":   {true, triage.ReasonAutoSubmitted, "Auto-Submitted: auto-replied"},
		"auto-submitted-auto-generated": {true, triage.ReasonAutoSubmitted, `Auto-Submitted: auto-generated; owner-email="admin@shop.example.com"`},
		"auto-submitted-uppercase":      {true, triage.ReasonAutoSubmitted, "Auto-Submitted: Auto-Notified"},
		"list-id":                       {true, triage.ReasonList, "List-Id: Forum kawowe <forum.lists.example.org>"},
		"list-unsubscribe":              {true, triage.ReasonList, "List-Unsubscribe: <mailto:unsub@sklep.example.pl>, <https://sklep.example.pl/u/123>"},
		"list-post":                     {true, triage.ReasonList, "List-Post: <mailto:dev@lists.example.org>"},
		"precedence-bulk":               {true, triage.ReasonPrecedence, "Precedence: bulk"},
		"precedence-list":               {true, triage.ReasonPrecedence, "Precedence: list"},
		"precedence-junk":               {true, triage.ReasonPrecedence, "Precedence: junk"},
		"auto-response-suppress-oof":    {true, triage.ReasonAutoResponseSuppress, "X-Auto-Response-Suppress: DR, OOF, AutoReply"},
		"auto-response-suppress-all":    {true, triage.ReasonAutoResponseSuppress, "X-Auto-Response-Suppress: All"},
		"x-autoreply":                   {true, triage.ReasonAutoreplyHeader, "X-Autoreply: yes"},
		"x-autorespond":                 {true, triage.ReasonAutoreplyHeader, "X-Autorespond: Karol is away"},
		"mailer-daemon":                 {true, triage.ReasonNoReplySender, "From: MAILER-DAEMON@mx.example.net"},
		"noreply":                       {true, triage.ReasonNoReplySender, "From: noreply@allegro.example.pl"},
		"no-reply":                      {true, triage.ReasonNoReplySender, "From: no-reply@courier.example.com"},
		"do-not-reply":                  {true, triage.ReasonNoReplySender, "From: do-not-reply@bank.example.com"},
		"request-suffix":                {true, triage.ReasonNoReplySender, "From: coffee-request@lists.example.org"},
		"owner-prefix":                  {true, triage.ReasonNoReplySender, "From: owner-coffee@lists.example.org"},
		"bounces":                       {true, triage.ReasonNoReplySender, "From: bounces+12345-abcd=example.com@em.example.net"},
		"own-address":                   {true, triage.ReasonOwnAddress, "From: SERWIS@example.com"},
		"own-reply-to":                  {true, triage.ReasonOwnAddress, "Reply-To: serwis@example.com"},
		// Machines that send no RFC 3834 header.
		"report-delivery-status":          {true, triage.ReasonBounce, `Content-Type: multipart/report; report-type=delivery-status; boundary="dsn"`},
		"report-feedback-arf":             {true, triage.ReasonFeedbackReport, `Content-Type: multipart/report; report-type=feedback-report; boundary="arf"`},
		"report-read-receipt":             {true, triage.ReasonReadReceipt, `Content-Type: multipart/report; report-type=disposition-notification; boundary="mdn"`},
		"report-tls":                      {true, triage.ReasonReport, `Content-Type: multipart/report; report-type=tlsrpt; boundary="tls"`},
		"report-nested-delivery-status":   {true, triage.ReasonBounce, "Content-Type: message/delivery-status part"},
		"return-path-mailer-daemon":       {true, triage.ReasonBounce, "Return-Path: <MAILER-DAEMON@mx.example.net>"},
		"from-mail-delivery-system":       {true, triage.ReasonNoReplySender, "From: Mail.Delivery.System@mx.example.net"},
		"from-null":                       {true, triage.ReasonBounce, "From: <>"},
		"from-unparseable-bounce":         {true, triage.ReasonBounce, "From: Mail Delivery Subsystem <MAILER-DAEMON@>"},
		"from-unparseable-bounce-subject": {true, triage.ReasonBounce, "Subject: Undeliverable: Re: Reklamacja"},
		"x-failed-recipients":             {true, triage.ReasonBounce, "X-Failed-Recipients: jan@example.org"},
		"challenge-bluebottle":            {true, triage.ReasonChallenge, "X-Bluebottle-Request: challenge"},
		"challenge-confirm-human":         {true, triage.ReasonChallenge, `Return-Path: <cr-bounces@filter.example.net> (From jan.kowalski@example.org; asks "confirm you are human")`},
		"list-manager-mlserver":           {true, triage.ReasonListManager, "X-Mlserver: fml [fml 4.0.3 release (20011202/4.0.3)]"},
		"list-manager-admin":              {true, triage.ReasonListManager, "From: coffee-admin@lists.example.org"},
		"auto-lotus-absence":              {true, triage.ReasonAutoreplySubject, "Subject: Auto: Reklamacja"},
		// Look like machines, but are people to answer.
		"auto-submitted-no":         {},
		"replyguy":                  {},
		"precedence-first-class":    {},
		"auto-response-suppress-dr": {},
		"x-autoreply-no":            {},
		"human":                     {},
		"human-named-owner":         {},
		"auto-car-serial":           {}, // "Auto" is a car in Polish; the serial says a customer wrote it
		"human-unparseable-from":    {}, // no sign of a bounce: failed no_sender, for a person
		"human-same-return-path":    {}, // a challenge phrase, but the person's own envelope
	}
	covered := map[triage.Reason]bool{}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(want, Check(cfg, parseFile(t, filepath.Join("testdata", name+".eml")))); diff != "" {
				t.Errorf("Check (-want +got):\n%s", diff)
			}
		})
		covered[want.Reason] = true
	}
	for _, r := range []triage.Reason{triage.ReasonBounce, triage.ReasonAutoSubmitted, triage.ReasonList, triage.ReasonPrecedence,
		triage.ReasonAutoResponseSuppress, triage.ReasonAutoreplyHeader, triage.ReasonNoReplySender, triage.ReasonOwnAddress,
		triage.ReasonFeedbackReport, triage.ReasonReadReceipt, triage.ReasonReport, triage.ReasonChallenge, triage.ReasonListManager, triage.ReasonAutoreplySubject} {
		if !covered[r] {
			t.Errorf("reason %s has no fixture", r)
		}
	}
	files, _ := filepath.Glob("testdata/*.eml")
	for _, f := range files {
		if _, ok := tests[strings.TrimSuffix(filepath.Base(f), ".eml")]; !ok {
			t.Errorf("fixture %s has no test case", f)
		}
	}
}

// TestCheckOrder shows that the first matching rule wins when several apply.
func TestCheckOrder(t *testing.T) {
	m := &message.Message{
		From: mustAddr("noreply@example.org"),
		Header: map[string][]string{
			"Precedence":     {"bulk"},
			"List-Id":        {"<x.example.org>"},
			"Auto-Submitted": {"auto-generated"},
		},
	}
	want := Verdict{Skip: true, Reason: triage.ReasonAutoSubmitted, Detail: "Auto-Submitted: auto-generated"}
	if diff := cmp.Diff(want, Check(cfg, m)); diff != "" {
		t.Errorf("Check (-want +got):\n%s", diff)
	}
}

func TestCheckEdgeCases(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		m    *message.Message
		want Verdict
	}{
		{"nil message", cfg, nil, Verdict{}},
		{"no sender is not skipped here", cfg, &message.Message{Header: map[string][]string{}}, Verdict{}},
		{"no own addresses configured", Config{}, &message.Message{From: mustAddr("serwis@example.com")}, Verdict{}},
		{"empty auto-submitted ignored", cfg, &message.Message{From: mustAddr("a@example.pl"), Header: map[string][]string{"Auto-Submitted": {""}}}, Verdict{}},
		{"bare mailer-daemon without domain", cfg, &message.Message{Header: map[string][]string{"From": {"MAILER-DAEMON (Mail Delivery System)"}}}, Verdict{true, triage.ReasonBounce, "From: MAILER-DAEMON (Mail Delivery System)"}},
		{"null From with a display name", cfg, &message.Message{Header: map[string][]string{"From": {`"Mail Delivery" < >`}}}, Verdict{true, triage.ReasonBounce, `From: "Mail Delivery" < >`}},
		{"challenge phrase without Return-Path", cfg, &message.Message{From: mustAddr("a@example.pl"), Text: "please confirm you are human", Header: map[string][]string{}}, Verdict{}},
		{"TMDA challenge", cfg, &message.Message{From: mustAddr("a@example.pl"), Header: map[string][]string{"X-Delivery-Agent": {"TMDA/1.1.12 (Macallan)"}}}, Verdict{true, triage.ReasonChallenge, "X-Delivery-Agent: TMDA/1.1.12 (Macallan)"}},
		{"a delivery agent that is not TMDA", cfg, &message.Message{From: mustAddr("a@example.pl"), Header: map[string][]string{"X-Delivery-Agent": {"procmail"}}}, Verdict{}},
		{"an admin who is a person", cfg, &message.Message{From: mustAddr("admin@shop.example.pl")}, Verdict{}},
		{"postmaster", cfg, &message.Message{From: mustAddr("postmaster@example.net")}, Verdict{true, triage.ReasonNoReplySender, "From: postmaster@example.net"}},
		{"noreply with underscore", cfg, &message.Message{From: mustAddr("no_reply@example.net")}, Verdict{true, triage.ReasonNoReplySender, "From: no_reply@example.net"}},
		{"people with similar names", cfg, &message.Message{From: mustAddr("requester@example.net")}, Verdict{}},
		{"bounce person", cfg, &message.Message{From: mustAddr("bouncer.jan@example.net")}, Verdict{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Check(tt.cfg, tt.m)); diff != "" {
				t.Errorf("Check (-want +got):\n%s", diff)
			}
		})
	}
}

func mustAddr(a string) mail.Address { return mail.Address{Address: a} }

// parseFile is the message in the file path.
func parseFile(t *testing.T, path string) *message.Message {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := message.Parse(raw)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}
