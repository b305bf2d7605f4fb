package processor_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"triage"

	"triage/internal/agent"
	"triage/internal/dispatcher"
	"triage/internal/guard"
	"triage/internal/instructions"
	"triage/internal/processor"
	"triage/internal/prompt"
	"triage/internal/testkit/toolstest"
)

// reader is a model that "reads" a serial from the photos it was sent: it
// chooses valid-warranty and checks the serial in the opening turn (the
// rules are unsure of a serial they cannot see), records the first user
// turn, opens a ticket when the warranty is valid, and replies.
type reader struct {
	serial string
	mu     sync.Mutex
	first  []*genai.Part
}

func (r *reader) GenerateContent(ctx context.Context, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	f, err := prompt.ParseFacts(contents[0].Parts[0].Text)
	if err != nil {
		return nil, err
	}
	for _, t := range cfg.Tools {
		for _, d := range t.FunctionDeclarations {
			if d.Name == prompt.ChooseScenario {
				return resp(
					&genai.Part{FunctionCall: &genai.FunctionCall{ID: "c-choose", Name: prompt.ChooseScenario, Args: map[string]any{"scenario": "valid-warranty", "reason": "photo"}}},
					&genai.Part{FunctionCall: &genai.FunctionCall{ID: "c-check_warranty", Name: "check_warranty", Args: map[string]any{"serial_number": r.serial}}},
				), nil
			}
		}
	}
	r.mu.Lock()
	r.first = contents[0].Parts
	r.mu.Unlock()
	done := map[string]map[string]any{}
	for _, c := range contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				done[p.FunctionResponse.Name] = p.FunctionResponse.Response
			}
		}
	}
	call := func(name string, args map[string]any) *genai.GenerateContentResponse {
		return resp(&genai.Part{FunctionCall: &genai.FunctionCall{ID: "c-" + name, Name: name, Args: args}})
	}
	switch {
	case done["check_warranty"] == nil:
		return call("check_warranty", map[string]any{"serial_number": r.serial}), nil
	case done["create_ticket"] == nil && status(done["check_warranty"]) == "valid":
		return call("create_ticket", map[string]any{"serial_number": r.serial, "customer_email": f.From, "priority": "normal"}), nil
	case done["send_email"] == nil:
		return call("send_email", map[string]any{"to": f.ReplyTo, "subject": "Re: " + f.Subject, "body": "Dzień dobry,\n\nodpowiedź.\n\nZespół serwisu gwarancyjnego"}), nil
	}
	return resp(&genai.Part{Text: "done"}), nil
}

// photoEnv builds a pipeline over the shipped tools, with policy changing
// check_warranty's and create_ticket's serial policy when not "".
func photoEnv(t *testing.T, m agent.Model, policy string, ac processor.AttachConfig) *processor.Processor {
	t.Helper()
	dir := t.TempDir()
	set := testScenarios(t)
	ts := toolstest.Shipped(t)
	if policy != "" {
		for _, name := range []string{"check_warranty", "create_ticket"} {
			ts.Tools[name].Args["serial_number"].From = policy
		}
	}
	w, tk, ob, ext := newBackends(t, dir, "SN-48213-PL,valid,2027-05-31,Ekspres\n")
	p, err := processor.Assemble(agent.Config{Model: m, MaxRetries: -1},
		dispatcher.Config{Tools: ts, Builtins: dispatcher.Routes(w, nil, tk, ob, "Serwis <serwis@example.com>", "example.com", dispatcher.Notices{})},
		processor.Config{Scenarios: set, Extractor: ext, ModelName: "reader", Tickets: tk, Attachments: ac,
			Guard: guard.Config{OwnAddresses: []string{"serwis@example.com"}}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type part struct {
	name, typ string
	data      []byte
}

// photoEmail is a warranty claim whose serial is only in the photo.
func photoEmail(parts ...part) []byte {
	var b strings.Builder
	b.WriteString("From: Anna <anna@customer.example>\r\nTo: serwis@example.com\r\nSubject: Reklamacja ekspresu\r\n" +
		"Message-ID: <photo@customer.example>\r\nDate: Mon, 16 Nov 2026 09:12:44 +0100\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" +
		"Dzień dobry, ekspres nie grzeje. Numer seryjny jest na zdjęciu tabliczki.\r\n")
	for _, p := range parts {
		fmt.Fprintf(&b, "--b1\r\nContent-Type: %s\r\nContent-Disposition: attachment; filename=%q\r\nContent-Transfer-Encoding: base64\r\n\r\n%s\r\n",
			p.typ, p.name, base64.StdEncoding.EncodeToString(p.data))
	}
	b.WriteString("--b1--\r\n")
	return []byte(b.String())
}

// png is a PNG signature followed by n bytes.
func png(n int) []byte {
	return append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{7}, n)...)
}

func TestAttachmentsToModel(t *testing.T) {
	jpeg := append([]byte{0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 'J', 'F', 'I', 'F', 0}, bytes.Repeat([]byte{1}, 300)...)
	pdf := []byte("%PDF-1.7\n1 0 obj <<>> endobj\n%%EOF\n")
	raw := photoEmail(
		part{"tabliczka.jpg", "image/jpeg", jpeg},
		part{"paragon.pdf", "application/pdf", pdf},
		part{"program.jpg", "image/jpeg", []byte("MZ\x90\x00 this is an executable")}, // not a photo
		part{"zdjecia.zip", "application/zip", []byte("PK\x03\x04zip")},
		part{"strona.html", "text/html", []byte("<html>x</html>")},
		part{"duze.png", "image/png", png(5000)},
		part{"a.png", "image/png", png(100)},
		part{"b.png", "image/png", png(200)},
	)
	m := &reader{serial: "SN-48213-PL"}
	p := photoEnv(t, m, "", processor.AttachConfig{MaxCount: 4})
	out := p.Process(context.Background(), processor.Input{Name: "photo.eml", Raw: raw})

	want := []processor.AttachmentInfo{
		{Name: "tabliczka.jpg", Type: "image/jpeg", Size: len(jpeg), Sent: true},
		{Name: "paragon.pdf", Type: "application/pdf", Size: len(pdf), Sent: true},
		{Name: "program.jpg", Type: "image/jpeg", Size: 26, NotSent: processor.NotSentContent},
		{Name: "zdjecia.zip", Type: "application/zip", Size: 7, NotSent: processor.NotSentType},
		{Name: "strona.html", Type: "text/html", Size: 14, NotSent: processor.NotSentType},
		{Name: "duze.png", Type: "image/png", Size: 5016, NotSent: processor.NotSentCount},
		{Name: "a.png", Type: "image/png", Size: 116, Sent: true},
		{Name: "b.png", Type: "image/png", Size: 216, Sent: true},
	}
	if diff := cmp.Diff(want, out.Attachments); diff != "" {
		t.Errorf("outcome attachments (-want +got):\n%s", diff)
	}
	// What the model was sent: the text, then exactly the sent attachments
	// as inline data, in order; the trusted facts name them.
	m.mu.Lock()
	first := m.first
	m.mu.Unlock()
	var got []string
	for _, p := range first[1:] {
		if p.InlineData == nil {
			t.Fatalf("part after the text is not inline data: %+v", p)
		}
		got = append(got, fmt.Sprintf("%s %d", p.InlineData.MIMEType, len(p.InlineData.Data)))
	}
	if diff := cmp.Diff([]string{fmt.Sprintf("image/jpeg %d", len(jpeg)), fmt.Sprintf("application/pdf %d", len(pdf)), "image/png 116", "image/png 216"}, got); diff != "" {
		t.Errorf("inline parts (-want +got):\n%s", diff)
	}
	f, err := prompt.ParseFacts(first[0].Text)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{0, 1, 6, 7}, f.AttachmentsSeen); diff != "" {
		t.Errorf("attachments_seen (-want +got):\n%s", diff)
	}
	for _, s := range []string{"2 of a type the model is never sent", "1 over the 4 attachments", "1 whose content is not what its type says"} {
		if !strings.Contains(f.AttachmentsNote, s) {
			t.Errorf("attachments_note %q lacks %q", f.AttachmentsNote, s)
		}
	}
	// The serial the model read from the photo: accepted by the shipped
	// serials_or_attachments policy, and marked.
	if out.Status != triage.StatusReplied || out.SerialSource != processor.SerialSourceAttachment {
		t.Errorf("status %s (%s: %s), serial_source %q; want replied from an attachment", out.Status, out.Reason, out.Detail, out.SerialSource)
	}
	for _, c := range out.FunctionCalls {
		if c.Name != "send_email" && (!c.OK || c.SerialSource != "attachment") {
			t.Errorf("%s: ok %v, serial_source %q; want ok from an attachment", c.Name, c.OK, c.SerialSource)
		}
	}
}

// The largest go first when the total is over MaxBytes.
func TestAttachmentsTotalBytes(t *testing.T) {
	raw := photoEmail(part{"a.png", "image/png", png(3000)}, part{"b.png", "image/png", png(1000)}, part{"c.png", "image/png", png(500)})
	m := &reader{serial: "SN-48213-PL"}
	out := photoEnv(t, m, "", processor.AttachConfig{MaxBytes: 2000}).Process(context.Background(), processor.Input{Raw: raw})
	var got []string
	for _, a := range out.Attachments {
		got = append(got, fmt.Sprintf("%s %v %s", a.Name, a.Sent, a.NotSent))
	}
	if diff := cmp.Diff([]string{"a.png false over_max_bytes", "b.png true ", "c.png true "}, got); diff != "" {
		t.Errorf("attachments (-want +got):\n%s", diff)
	}
}

// A serial only in a photo: from: serials refuses it whatever the model
// says it read; serials_or_attachments accepts it only when the model was
// sent an attachment.
func TestSerialFromAttachmentPolicy(t *testing.T) {
	photo := photoEmail(part{"tabliczka.png", "image/png", png(100)})
	tests := []struct {
		name, policy string
		ac           processor.AttachConfig
		raw          []byte
		want         agent.ErrorCode // check_warranty: "ok" or the refusal code
		source       string
	}{
		{"serials refuses a serial read from a photo", instructions.FromSerials, processor.AttachConfig{}, photo, dispatcher.CodeSerialNotInMessage, ""},
		{"serials_or_attachments accepts it", instructions.FromSerialsOrAttachments, processor.AttachConfig{}, photo, "ok", "attachment"},
		// Without an attachment seen, "serial: absent" holds: the scenario
		// asks for the serial and offers no check at all.
		{"no attachment sent: refused", instructions.FromSerialsOrAttachments, processor.AttachConfig{MaxCount: -1}, photo, dispatcher.CodeUnknownFunction, ""},
		{"no attachment at all: refused", instructions.FromSerialsOrAttachments, processor.AttachConfig{}, photoEmail(), dispatcher.CodeUnknownFunction, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := photoEnv(t, &reader{serial: "SN-48213-PL"}, tt.policy, tt.ac).Process(context.Background(), processor.Input{Raw: tt.raw})
			c := out.FunctionCalls[0]
			got := agent.ErrorCode("ok")
			if c.Error != nil {
				got = c.Error.Code
			}
			if c.Name != "check_warranty" || got != tt.want || c.SerialSource != tt.source || out.SerialSource != tt.source {
				t.Errorf("%s: %s, serial_source %q (outcome %q); want %s, %q", c.Name, got, c.SerialSource, out.SerialSource, tt.want, tt.source)
			}
		})
	}
	// A value that is not one whole serial is never taken from a photo.
	out := photoEnv(t, &reader{serial: "SN-48213-PL; DROP"}, instructions.FromSerialsOrAttachments, processor.AttachConfig{}).Process(context.Background(), processor.Input{Raw: photo})
	if c := out.FunctionCalls[0]; c.Error == nil || c.Error.Code != dispatcher.CodeSerialNotInMessage {
		t.Errorf("a non-serial read from a photo: %+v", c)
	}
}

// 10,000 attachments and 87,000 serial-like tokens: the prompt and the
// outcome list at most the caps and count the rest.
func TestListsCapped(t *testing.T) {
	var b strings.Builder
	b.WriteString("From: Anna <anna@customer.example>\r\nTo: serwis@example.com\r\nSubject: Reklamacja\r\nMessage-ID: <many@customer.example>\r\n" +
		"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: text/plain\r\n\r\n")
	for i := 0; i < 87000; i++ {
		fmt.Fprintf(&b, "SN-%05d-PL ", i)
	}
	b.WriteString("\r\n")
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(&b, "--b1\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=\"f%d.bin\"\r\n\r\nx\r\n", i)
	}
	b.WriteString("--b1--\r\n")
	m := &reader{serial: "SN-00000-PL"}
	out := photoEnv(t, m, "", processor.AttachConfig{}).Process(context.Background(), processor.Input{Raw: []byte(b.String())})
	if len(out.Attachments) != processor.MaxAttachmentsListed || out.AttachmentsOmitted != 10000-processor.MaxAttachmentsListed {
		t.Errorf("outcome lists %d attachments, %d omitted", len(out.Attachments), out.AttachmentsOmitted)
	}
	if len(out.SerialNumbers) != processor.MaxSerialsListed || out.SerialsOmitted == 0 {
		t.Errorf("outcome lists %d serials, %d omitted", len(out.SerialNumbers), out.SerialsOmitted)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	f, err := prompt.ParseFacts(m.first[0].Text)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Attachments) != processor.MaxAttachmentsListed || f.AttachmentsOmitted != out.AttachmentsOmitted ||
		len(f.SerialNumbers) != processor.MaxSerialsListed || f.SerialsOmitted != out.SerialsOmitted {
		t.Errorf("prompt facts: %d attachments (+%d), %d serials (+%d)", len(f.Attachments), f.AttachmentsOmitted, len(f.SerialNumbers), f.SerialsOmitted)
	}
	if n := len(m.first[0].Text); n > 64<<10 {
		t.Errorf("the first user turn is %d bytes", n)
	}
}

// Attachments whose bytes are not what their type says are refused before
// the plan, from the first bytes the parse kept: sixteen small "photos"
// that are text never keep the one real photo from the model, however many
// of them come first.
func TestAttachmentsContentSniffedFirst(t *testing.T) {
	var parts []part
	for i := range 16 {
		parts = append(parts, part{fmt.Sprintf("fake%02d.png", i), "image/png", []byte("these bytes are text, not a PNG")})
	}
	parts = append(parts, part{"tabliczka.png", "image/png", png(1000)})
	m := &reader{serial: "SN-48213-PL"}
	out := photoEnv(t, m, "", processor.AttachConfig{}).Process(context.Background(), processor.Input{Raw: photoEmail(parts...)})
	if len(out.Attachments) != 17 {
		t.Fatalf("%d attachments listed, want 17", len(out.Attachments))
	}
	for i, a := range out.Attachments {
		want := processor.NotSentContent
		if i == 16 {
			want = ""
		}
		if a.NotSent != want || a.Sent != (want == "") {
			t.Errorf("%s: sent %v, not_sent %q; want %q", a.Name, a.Sent, a.NotSent, want)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.first) != 2 || m.first[1].InlineData == nil || len(m.first[1].InlineData.Data) != len(png(1000)) {
		t.Errorf("the model was sent %d parts, want the text and tabliczka.png; outcome %s %s %s", len(m.first), out.Status, out.Reason, out.Detail)
	}
}
