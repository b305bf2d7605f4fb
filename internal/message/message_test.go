package message

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"triage/internal/serial"
)

// header is the part of a parsed message compared exactly.
type header struct {
	FromName, From, ReplyTo string
	To                      []string
	Subject                 string
	MessageID               string
	InReplyTo               string
	References              []string
	HasDate                 bool
	FromHTML                bool
	Attachments             []Attachment
}

func headerOf(m *Message) header {
	return header{
		FromName: m.From.Name, From: m.From.Address, ReplyTo: m.ReplyTo, To: m.To,
		Subject: m.Subject, MessageID: m.MessageID, InReplyTo: m.InReplyTo, References: m.References,
		HasDate: !m.Date.IsZero(), FromHTML: m.FromHTML, Attachments: m.Attachments,
	}
}

func TestParseFixtures(t *testing.T) {
	tests := []struct {
		file string
		want header
		// text and quoted must contain these; notText must not be in Text.
		text, quoted, notText []string
		// problems must each be a substring of some recorded problem;
		// when empty, no problem may be recorded.
		problems []string
		// serials are what serial.Extract finds in Text, then Quoted.
		serials []string
	}{
		{
			file:    "utf8-plain.eml",
			serials: []string{"SN-48213-PL"},
			want: header{FromName: "Anna Nowak", From: "anna.nowak@example.pl", ReplyTo: "anna.nowak@example.pl",
				To: []string{"serwis@example.com"}, Subject: "Reklamacja – ekspres nie grzeje, SN-48213-PL",
				MessageID: "<utf8-plain-1@mail.example.pl>", InReplyTo: "<prev-1@example.com>",
				References: []string{"<root-1@example.com>", "<prev-1@example.com>"}, HasDate: true},
			text:    []string{"numer seryjny SN-48213-PL", "Zażółć gęślą jaźń.", "-- \nAnna Nowak"},
			quoted:  []string{"napisał(a):", "> Numer zgłoszenia: T-1001"},
			notText: []string{"Dziękujemy"},
		},
		{
			file:    "iso88592-qp.eml",
			serials: []string{"SN77001"},
			want: header{FromName: "Paweł Łuczak", From: "pawel.luczak@example.pl", ReplyTo: "pawel.luczak@example.pl",
				To: []string{"serwis@example.com", "biuro@example.pl"}, Subject: "Pęknięty zbiornik - zgłoszenie",
				MessageID: "<iso88592-qp@mail.example.pl>", HasDate: true},
			text:    []string{"nr seryjny SN77001 ma pęknięty zbiornik. Łączę pozdrowienia.", "Źdźbło, żółw, ćma, ńę."},
			quoted:  []string{"W dniu 2025-03-01 o 12:00, Serwis pisze:", "> Prosimy o podanie numeru seryjnego."},
			notText: []string{"Prosimy"},
		},
		{
			// UTF-7 (RFC 2152), as old Outlook sent it: encoded words and body.
			file:    "utf7.eml",
			serials: []string{"SN-48213-PL"},
			want: header{FromName: "Łukasz Żak", From: "lukasz.zak@example.pl", ReplyTo: "lukasz.zak@example.pl",
				To: []string{"serwis@example.com"}, Subject: "Reklamacja ekspresu – nie działa",
				MessageID: "<utf7@example.pl>", HasDate: true},
			text: []string{"Dzień dobry,\nmój ekspres SN-48213-PL przestał grzać wodę. Proszę o naprawę.\nZażółć gęślą jaźń"},
		},
		{
			file:    "win1250-base64.eml",
			serials: []string{"SN-55120-PL", "SN-11111-PL"},
			want: header{FromName: "Grzegorz Wójcik", From: "g.wojcik@example.pl", ReplyTo: "g.wojcik@example.pl",
				To: []string{"serwis@example.com"}, Subject: "Wymiana grzałki",
				MessageID: "<win1250-b64@mail.example.pl>", HasDate: true},
			text:    []string{"gwarancja obejmuje wymianę grzałki", "Numer seryjny: SN-55120-PL", "Grzegorz Wójcik"},
			quoted:  []string{"Od: Serwis <serwis@example.com>", "Wysłano: piątek, 7 marca 2025 10:00", "SN-11111-PL"},
			notText: []string{"____", "SN-11111-PL", "Wysłano"},
		},
		{
			file:    "html-only-win1250.eml",
			serials: []string{"SN-70412-PL"},
			want: header{FromName: "Małgorzata Żak", From: "m.zak@example.pl", ReplyTo: "m.zak@example.pl",
				To: []string{"serwis@example.com"}, Subject: "Odkurzacz się przegrzewa",
				MessageID: "<html-only@mail.example.pl>", HasDate: true, FromHTML: true},
			text:    []string{"Dzień dobry,", "numerze seryjnym", "SN-70412-PL", "głośno pracuje i się przegrzewa", "Małgorzata Żak"},
			quoted:  []string{"pisze:", "> Prosimy o numer seryjny."},
			notText: []string{"HIDDEN", "SN00000", "<p>", "color: red", "Prosimy"},
		},
		{
			file:    "nested-multipart.eml",
			serials: []string{"ABC123456"},
			want: header{FromName: "John Smith", From: "john.smith@example.com", ReplyTo: "john.smith@example.com",
				To: []string{"serwis@example.com"}, Subject: "Broken kettle, invoice attached",
				MessageID: "<nested@mail.example.com>", HasDate: true,
				Attachments: []Attachment{
					{Name: "invoice.pdf", Type: "application/pdf", Size: 45},
					{Name: "photo.png", Type: "image/png", Size: 40},
				}},
			text:    []string{"my kettle S/N: ABC123456 stopped working."},
			quoted:  []string{"-----Original Message-----", "order 2025-001234"},
			notText: []string{"HTML-VERSION", "Original Message", "%PDF"},
		},
		{
			file:    "missing-boundary.eml",
			serials: []string{"SN31337"},
			want: header{FromName: "Ewa Lis", From: "ewa.lis@example.pl", ReplyTo: "ewa.lis@example.pl",
				To: []string{"serwis@example.com"}, Subject: "Brak granicy",
				MessageID: "<missing-boundary@mail.example.pl>", HasDate: true},
			text:     []string{"Toster SN31337 nie działa"},
			problems: []string{"multipart: missing closing boundary"},
		},
		{
			file:    "lowercase-headers.eml",
			serials: []string{"KR-20931"},
			want: header{FromName: "Tomasz Kruk", From: "t.kruk@example.pl", ReplyTo: "t.kruk@example.pl",
				To: []string{"serwis@example.com"}, Subject: "male litery w naglowkach",
				MessageID: "<lowercase@mail.example.pl>"},
			text:     []string{"Piszę z prośbą o naprawę. Nr ser. KR-20931"},
			problems: []string{"no Date"},
		},
		{
			file:    "unknown-charset.eml",
			serials: []string{"SN40404"},
			want: header{FromName: "Zofia Bak", From: "z.bak@example.pl", ReplyTo: "z.bak@example.pl",
				To: []string{"serwis@example.com"}, Subject: "Nieznany zestaw znakow",
				MessageID: "<unknown-charset@mail.example.pl>", HasDate: true},
			text:     []string{"Żelazko SN40404 przestało działać, proszę o pomoc."},
			problems: []string{"unknown charset", "fallback"},
		},
		{
			file:    "broken-base64.eml",
			serials: []string{"SN50505"},
			want: header{FromName: "Adam Mazur", From: "adam.mazur@example.pl", ReplyTo: "adam.mazur@example.pl",
				To: []string{"serwis@example.com"}, Subject: "Uszkodzony base64",
				MessageID: "<broken-b64@mail.example.pl>", HasDate: true},
			text:     []string{"czajnik SN50505 cieknie"},
			problems: []string{"base64: illegal base64 data"},
		},
		{
			file: "no-sender.eml",
			want: header{To: []string{"serwis@example.com"}, Subject: "Bez nadawcy",
				MessageID: "<no-sender@mail.example.pl>", HasDate: true},
			text:     []string{"Wiadomość bez adresu nadawcy."},
			problems: []string{"no usable From address"},
		},
		{
			file:    "english-reply.eml",
			serials: []string{"XJ-90210-B", "SN-00042-EN"},
			want: header{FromName: "Mary Jones", From: "mary.jones@example.com", ReplyTo: "mary.j@example.com",
				To: []string{"serwis@example.com"}, Subject: "Re: Your repair request",
				MessageID: "<en-reply@mail.example.com>", InReplyTo: "<ticket-77@example.com>", HasDate: true},
			text:    []string{"the serial number is XJ-90210-B", "-- \nMary Jones\nSent from my phone"},
			quoted:  []string{"On Mon, 17 Mar 2025 at 10:00, Support Team <serwis@example.com>\nwrote:", "> Old reference SN-00042-EN"},
			notText: []string{"wrote:", "SN-00042-EN"},
		},
		{
			file:    "forwarded.eml",
			serials: []string{"SN60606"},
			want: header{FromName: "Piotr Zielinski", From: "piotr.z@example.pl", ReplyTo: "piotr.z@example.pl",
				To: []string{"serwis@example.com"}, Subject: "Fwd: Naprawa",
				MessageID: "<forwarded@mail.example.pl>", HasDate: true},
			text:    []string{"Przesyłam korespondencję żony."},
			quoted:  []string{"---------- Forwarded message ---------", "Robot kuchenny SN60606"},
			notText: []string{"SN60606", "Forwarded"},
		},
		{
			file:    "original-message-pl.eml",
			serials: []string{"SN80808"},
			want: header{FromName: "Karol Wrona", From: "karol.wrona@example.pl", ReplyTo: "karol.wrona@example.pl",
				To: []string{"serwis@example.com"}, Subject: "Odp: Zgloszenie",
				MessageID: "<orig-pl@mail.example.pl>", HasDate: true},
			text:    []string{"Nadal czekam na odpowiedź."},
			quoted:  []string{"----- Wiadomość oryginalna -----", "Mikser SN80808"},
			notText: []string{"SN80808"},
		},
		{
			file:    "dnia-napisal.eml",
			serials: []string{"SN90909"},
			want: header{FromName: "Beata Kos", From: "beata.kos@example.pl", ReplyTo: "beata.kos@example.pl",
				To: []string{"serwis@example.com"}, Subject: "Re: Gwarancja",
				MessageID: "<dnia@mail.example.pl>", HasDate: true},
			text:    []string{"Dziękuję, czekam na kuriera."},
			quoted:  []string{"Dnia 19 marca 2025 o 10:15 Serwis <serwis@example.com> napisał(a):", "SN90909"},
			notText: []string{"SN90909"},
		},
		{
			// A From net/mail cannot parse is not guessed from its text: no
			// sender (the pipeline leaves it for a person). To is only
			// informative and keeps the loose scan.
			file: "loose-from.eml",
			want: header{
				To: []string{"serwis@example.com", "rekl@example.com"}, Subject: "Zgłoszenie bez nawiasów",
				MessageID: "<loose-from@mail.example.pl>", HasDate: true},
			text:     []string{"Proszę o kontakt."},
			problems: []string{"From:", "To:", "no usable From address"},
		},
		{
			// The address in the display name is not the sender, and neither
			// is the one in angle brackets: nothing is guessed, and a
			// malformed Reply-To falls back to From (here: none).
			file: "address-in-display-name.eml",
			want: header{To: []string{"serwis@example.com"}, Subject: "Pilne",
				MessageID: "<addr-in-name@evil.example>", HasDate: true},
			text:     []string{"SN-48213-PL"},
			serials:  []string{"SN-48213-PL"},
			problems: []string{"From:", "Reply-To:", "no usable From address"},
		},
		{
			// A valid From with a Reply-To that does not parse: replies go
			// to From, not to an address guessed from the Reply-To text.
			file: "bad-reply-to.eml",
			want: header{FromName: "Anna Nowak", From: "anna.nowak@example.pl", ReplyTo: "anna.nowak@example.pl",
				To: []string{"serwis@example.com"}, Subject: "Odpowiedz gdzie indziej",
				MessageID: "<bad-reply-to@mail.example.pl>", HasDate: true},
			text:     []string{"Proszę o kontakt."},
			problems: []string{"Reply-To:"},
		},
		{
			file:    "bottom-posted.eml",
			serials: []string{"SN24680"},
			want: header{FromName: "Olga Sikora", From: "olga.sikora@example.com", ReplyTo: "olga.sikora@example.com",
				To: []string{"serwis@example.com"}, Subject: "Re: Questions",
				MessageID: "<bottom@mail.example.com>", HasDate: true},
			text:    []string{"It is SN24680.\nIn January."},
			quoted:  []string{"wrote:\n> What is the serial number?\n> When did you buy it?"},
			notText: []string{"wrote:", "> "},
		},
		{
			file:    "rfc822-attached.eml",
			serials: []string{"SN-66540-PL"},
			want: header{FromName: "Hanna Wolska", From: "hanna.wolska@example.pl", ReplyTo: "hanna.wolska@example.pl",
				To: []string{"serwis@example.com"}, Subject: "Fwd: Reklamacja suszarki",
				MessageID: "<rfc822@mail.example.pl>", HasDate: true,
				Attachments: []Attachment{{Name: "oryginal.eml", Type: "message/rfc822", Size: 259}}},
			text:    []string{"Przesyłam wcześniejszą wiadomość w załączniku."},
			quoted:  []string{"---------- Forwarded message ---------\nFrom: Hanna Wolska <hanna.wolska@example.pl>\nSubject: Suszarka się wyłącza\n\nSuszarka SN-66540-PL wyłącza się po minucie."},
			notText: []string{"SN-66540-PL"},
		},
		{
			file:    "outlook-html-reply.eml",
			serials: []string{"RM-40001", "SN-00007-XX"},
			want: header{FromName: "Robert Maj", From: "robert.maj@example.com", ReplyTo: "robert.maj@example.com",
				To: []string{"serwis@example.com"}, Subject: "RE: Ticket T-3003",
				MessageID: "<outlook-html@mail.example.com>", HasDate: true, FromHTML: true},
			text:    []string{"The device is still broken, my S/N is RM-40001."},
			quoted:  []string{"*From:* Support <serwis@example.com>", "SN-00007-XX"},
			notText: []string{"SN-00007-XX", "Sent:"},
		},
		{
			file:    "html-meta-charset.eml",
			serials: []string{"SN12121"},
			want: header{FromName: "Lena Dudek", From: "lena.dudek@example.pl", ReplyTo: "lena.dudek@example.pl",
				To: []string{"serwis@example.com"}, Subject: "Meta charset",
				MessageID: "<meta-charset@mail.example.pl>", HasDate: true, FromHTML: true},
			text:     []string{"Grzałka w czajniku SN12121 nie działa."},
			problems: []string{"charset"},
		},
		{
			file: "mbox-bad-header.eml",
			want: header{FromName: "Jan Wolny", From: "jan.wolny@example.pl", ReplyTo: "jan.wolny@example.pl",
				To: []string{"serwis@example.com"}, Subject: "=?x-klingon?Q?qapla?= ok",
				MessageID: "<mbox-bad@mail.example.pl>", HasDate: true},
			text:     []string{"Zgłaszam usterkę."},
			problems: []string{"mbox From_ line", "1 malformed header line(s) dropped", "Subject"}, notText: []string{"Content-Type"},
		},
	}
	ex, err := serial.New()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.file] = true
		t.Run(tt.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			m, err := Parse(raw)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tt.want, headerOf(m), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("header mismatch (-want +got):\n%s", diff)
			}
			if m.Size != len(raw) {
				t.Errorf("Size = %d, want %d", m.Size, len(raw))
			}
			for _, s := range tt.text {
				if !strings.Contains(m.Text, s) {
					t.Errorf("Text lacks %q; Text:\n%s", s, m.Text)
				}
			}
			for _, s := range tt.notText {
				if strings.Contains(m.Text, s) {
					t.Errorf("Text contains %q; Text:\n%s", s, m.Text)
				}
			}
			for _, s := range tt.quoted {
				if !strings.Contains(m.Quoted, s) {
					t.Errorf("Quoted lacks %q; Quoted:\n%s", s, m.Quoted)
				}
			}
			if len(tt.quoted) == 0 && m.Quoted != "" {
				t.Errorf("Quoted = %q, want empty", m.Quoted)
			}
			if diff := cmp.Diff(tt.serials, ex.Extract(m.Text, m.Quoted), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("serials (-want +got):\n%s", diff)
			}
			if len(tt.problems) == 0 && len(m.Problems) > 0 {
				t.Errorf("Problems = %q, want none", m.Problems)
			}
			for _, p := range tt.problems {
				if !containsSub(m.Problems, p) {
					t.Errorf("Problems = %q, want one containing %q", m.Problems, p)
				}
			}
		})
	}
	// Every fixture is covered by the table.
	files, _ := filepath.Glob("testdata/*.eml")
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			t.Errorf("fixture %s has no test case", f)
		}
	}
}

func containsSub(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func TestParseExactText(t *testing.T) {
	raw, err := os.ReadFile("testdata/utf8-plain.eml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	wantText := "Dzień dobry,\nmój ekspres (numer seryjny SN-48213-PL) przestał grzać wodę.\n" +
		"Proszę o naprawę gwarancyjną. Zażółć gęślą jaźń.\n\n-- \nAnna Nowak\ntel. 600 123 456"
	wantQuoted := "pon., 3 mar 2025 o 10:15 Serwis <serwis@example.com> napisał(a):\n" +
		"> Dziękujemy za zgłoszenie.\n> Numer zgłoszenia: T-1001"
	if diff := cmp.Diff(wantText, m.Text); diff != "" {
		t.Errorf("Text (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantQuoted, m.Quoted); diff != "" {
		t.Errorf("Quoted (-want +got):\n%s", diff)
	}
	if got, want := m.HeaderValue("content-type"), "text/plain; charset=UTF-8"; got != want {
		t.Errorf(`HeaderValue("content-type") = %q, want %q`, got, want)
	}
	if got := m.HeaderValue("X-Absent"); got != "" {
		t.Errorf(`HeaderValue("X-Absent") = %q, want ""`, got)
	}
	if got, want := m.Header["Subject"], []string{"Reklamacja – ekspres nie grzeje, SN-48213-PL"}; !cmp.Equal(got, want) {
		t.Errorf("Header[Subject] = %q, want decoded %q", got, want)
	}
}

func TestParseErrors(t *testing.T) {
	for _, raw := range []string{"", "   \r\n", "just some text without a header\n", " leading space: x\n\nbody"} {
		m, err := Parse([]byte(raw))
		if err == nil {
			t.Errorf("Parse(%q) = %+v, nil; want error", raw, m)
			continue
		}
		if m != nil || !strings.HasPrefix(err.Error(), "message:") {
			t.Errorf("Parse(%q) = %v, %v; want nil and an error starting with message:", raw, m, err)
		}
	}
}

// A first line that is no header field is named in the error, escaped and
// shortened: a file of binary junk does not put kilobytes of it into the
// outcome.
func TestParseErrorNamesTheFirstLine(t *testing.T) {
	junk := "x" + strings.Repeat("\x01\xfe junk ", 5000)
	for _, tc := range []struct{ raw, want string }{
		{"just some text without a header\r\n\r\nbody", `the first line (31 bytes) is not one: "just some text without a header"`},
		{" leading space: x\n\nbody", `the first line (17 bytes) is not one: " leading space: x"`},
		{junk + "\r\n\r\nbody", `the first line (40001 bytes) is not one: "x\x01\xfe junk`},
	} {
		_, err := Parse([]byte(tc.raw))
		if err == nil {
			t.Fatalf("Parse(%.40q) = nil error", tc.raw)
		}
		if !strings.Contains(err.Error(), tc.want) || len(err.Error()) > 400 {
			t.Errorf("Parse(%.40q): error %q (%d bytes), want it to contain %q and stay short", tc.raw, err, len(err.Error()), tc.want)
		}
	}
}

func TestSplitQuoted(t *testing.T) {
	tests := []struct {
		name, in, text, quoted string
	}{
		{"no history", "Hello\nworld", "Hello\nworld", ""},
		{"gt lines", "New text\n> old\n> older", "New text", "> old\n> older"},
		{"on wrote one line", "Thanks!\n\nOn Tue, Mar 4, 2025 at 9:00 AM Bob <b@x.example> wrote:\n> hi", "Thanks!", "On Tue, Mar 4, 2025 at 9:00 AM Bob <b@x.example> wrote:\n> hi"},
		{"w dniu wrapped", "Ok.\nW dniu 04.03.2025 o 09:00, Jan\nKowalski pisze:\nstare", "Ok.", "W dniu 04.03.2025 o 09:00, Jan\nKowalski pisze:\nstare"},
		{"outlook en", "See below.\nFrom: Bob <b@x.example>\nSent: Tuesday\nTo: us\n\nold", "See below.", "From: Bob <b@x.example>\nSent: Tuesday\nTo: us\n\nold"},
		{"prose wrote is not history", "My colleague wrote:\nit broke", "My colleague wrote:\nit broke", ""},
		{"from line alone is not history", "From: the shop\nit broke", "From: the shop\nit broke", ""},
		{"original message spaced", "Hi\n----- Original Message -----\nold", "Hi", "----- Original Message -----\nold"},
		{"forward only", "---------- Forwarded message ---------\nFrom: a\nbody", "", "---------- Forwarded message ---------\nFrom: a\nbody"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, quoted := splitQuoted(tt.in)
			if diff := cmp.Diff([2]string{tt.text, tt.quoted}, [2]string{text, quoted}); diff != "" {
				t.Errorf("splitQuoted (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHTMLHidden(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"visible", `<p>Hello <b>there</b></p>`, "Hello *there*"},
		{"display none", `<div style="color:#fff; DISPLAY: none !important">pre</div><p>body</p>`, "body"},
		{"visibility hidden", `<span style="visibility:hidden">x</span><p>body</p>`, "body"},
		{"hidden attr", `<div hidden>x</div><p>body</p>`, "body"},
		{"aria hidden", `<div aria-hidden="true">x</div><div aria-hidden="false">body</div>`, "body"},
		{"head style script", `<html><head><title>t</title><style>a{}</style></head><body><script>x()</script>body</body></html>`, "body"},
		{"comment", `<p>body<!-- secret --></p>`, "body"},
		{"blockquote", `<p>new</p><blockquote>old</blockquote>`, "new\n\n> old"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := htmlToText(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, strings.TrimSpace(got)); diff != "" {
				t.Errorf("htmlToText (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPartCaps: a huge text part is cut (on a rune boundary) instead of
// kept whole, and a huge attached message is listed with its size, not
// read into memory and parsed.
func TestPartCaps(t *testing.T) {
	big := strings.Repeat("Zażółć gęślą jaźń. ", 200_000) // ~4.4 MB of UTF-8
	raw := "From: Anna <anna@example.pl>\r\nTo: serwis@example.com\r\nSubject: Duzo\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" + big +
		"\r\n--b\r\nContent-Type: message/rfc822\r\nContent-Disposition: attachment; filename=old.eml\r\n\r\n" +
		"From: Anna <anna@example.pl>\r\nSubject: stara\r\n\r\n" + strings.Repeat("x", 5<<20) + "\r\n--b--\r\n"
	m, err := Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Text) > maxPartText || !utf8.ValidString(m.Text) || !strings.HasPrefix(m.Text, "Zażółć gęślą jaźń.") {
		t.Errorf("Text: %d bytes (valid UTF-8 %v); want at most %d, cut on a rune boundary", len(m.Text), utf8.ValidString(m.Text), maxPartText)
	}
	if !containsSub(m.Problems, "text/plain part of") || !containsSub(m.Problems, "attached message of") {
		t.Errorf("Problems = %q, want the cut and the unread attached message named", m.Problems)
	}
	if len(m.Attachments) != 1 || m.Attachments[0].Size < 5<<20 || m.Quoted != "" {
		t.Errorf("attachments %+v, quoted %d bytes; want old.eml listed with its size and not parsed", m.Attachments, len(m.Quoted))
	}
}

// A malformed Message-ID is not kept as written: a bare CR in it would
// forge a line wherever it is quoted (a staff notice, a log). The message
// has none then, and the problem is recorded; a well-formed ID followed by
// junk keeps the ID alone.
func TestMalformedMessageIDDropped(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{"<a b@example.com>\rTicket: TKT-000001 refund APPROVED by manager", ""},
		{"no-angle-brackets", ""},
		{"<ok@example.com>\rTicket: TKT-000001 refund APPROVED", "<ok@example.com>"},
		{"<ok@example.com>", "<ok@example.com>"},
	} {
		raw := "From: Jan <jan@example.com>\r\nMessage-ID: " + tc.value + "\r\nSubject: s\r\nDate: Sun, 22 Nov 2026 08:00:00 +0000\r\n\r\nbody\r\n"
		m, err := Parse([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if m.MessageID != tc.want {
			t.Errorf("Message-ID %q parsed as %q, want %q", tc.value, m.MessageID, tc.want)
		}
		dropped := strings.Contains(strings.Join(m.Problems, "\n"), "Message-ID: malformed")
		if dropped != (tc.want == "") {
			t.Errorf("Message-ID %q: problems %q", tc.value, m.Problems)
		}
	}
}

// TestCalendarMethod: the iTIP method of a text/calendar part is kept; a
// calendar file without one, or one inside an attached message, is not.
func TestCalendarMethod(t *testing.T) {
	head := "From: a@example.org\r\nTo: b@example.com\r\nSubject: x\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nhello\r\n--b\r\n"
	tests := map[string]string{
		"Content-Type: text/calendar; charset=utf-8; method=request\r\n\r\nBEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n":                                             "REQUEST",
		"Content-Type: text/calendar; method=CANCEL\r\nContent-Disposition: attachment; filename=a.ics\r\n\r\nBEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n":          "CANCEL",
		"Content-Type: text/calendar; name=slot.ics\r\nContent-Disposition: attachment; filename=slot.ics\r\n\r\nBEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n":       "",
		"Content-Type: message/rfc822\r\n\r\nFrom: c@example.org\r\nContent-Type: text/calendar; method=REQUEST\r\n\r\nBEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n": "",
	}
	for part, want := range tests {
		m, err := Parse([]byte(head + part + "--b--\r\n"))
		if err != nil {
			t.Fatal(err)
		}
		if m.CalendarMethod != want {
			t.Errorf("%q: CalendarMethod %q, want %q", part, m.CalendarMethod, want)
		}
	}
}

// TestEightBitSubject: a raw 8-bit character in a subject, inside an
// encoded word or beside one, is kept: in the encoded word's charset, else
// the message's charset, else windows-1250 (as a body without a charset).
func TestEightBitSubject(t *testing.T) {
	tests := []struct {
		subject, contentType, want string
	}{
		{"=?ISO-8859-1?Q?Die_Hasen_und_die_Fr\xf6sche?=", "text/plain; charset=us-ascii", "Die Hasen und die Frösche"},
		{"=?utf-8?q?Die_Hasen_und_die_Fr\xc3\xb6sche?=", "text/plain", "Die Hasen und die Frösche"},
		{"=?iso-8859-2?Q?Zg=B3oszenie?= \xbf\xf3\xb3ty", "text/plain; charset=iso-8859-2", "Zgłoszenie żółty"},
		{"Die Hasen und die Fr\xf6sche", "text/plain; charset=iso-8859-1", "Die Hasen und die Frösche"},
		{"Die Hasen und die Fr\xc3\xb6sche", "text/plain; charset=iso-8859-1", "Die Hasen und die Frösche"},
		{"=?utf-8?B?RGllIEhhc2Vu?= und die Fr\xf6sche", "multipart/mixed; boundary=x", "Die Hasen und die Frösche"},
		{"Reklamacja \xb9", "text/plain", "Reklamacja ą"}, // windows-1250, as a body without a charset
	}
	for _, tt := range tests {
		raw := "From: a@example.org\r\nSubject: " + tt.subject + "\r\nContent-Type: " + tt.contentType + "\r\n\r\n--x--\r\n"
		m, err := Parse([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if m.Subject != tt.want {
			t.Errorf("Subject %q (%s): got %q, want %q", tt.subject, tt.contentType, m.Subject, tt.want)
		}
		if got := m.Header["Subject"]; len(got) != 1 || got[0] != tt.want {
			t.Errorf("Header[Subject] of %q: %q, want %q", tt.subject, got, tt.want)
		}
	}
}
