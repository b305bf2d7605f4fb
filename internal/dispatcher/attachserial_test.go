package dispatcher

import (
	"context"
	"testing"

	"triage/internal/agent"
	"triage/internal/instructions"
	"triage/internal/testkit/toolstest"
)

// from: serials_or_attachments takes a serial the message does not hold
// only when the model was sent an attachment, only a whole serial, and
// marks the record; from: serials never does.
func TestSerialsOrAttachments(t *testing.T) {
	tests := []struct {
		policy string
		seen   int
		value  string
		want   agent.ErrorCode // "" ok, else the code
		source string
	}{
		{instructions.FromSerials, 1, "SN-99999-DE", CodeSerialNotInMessage, ""},
		{instructions.FromSerialsOrAttachments, 0, "SN-99999-DE", CodeSerialNotInMessage, ""},
		{instructions.FromSerialsOrAttachments, 1, "SN-99999-DE", "", "attachment"},
		{instructions.FromSerialsOrAttachments, 1, "SN-99999-DE and more", CodeSerialNotInMessage, ""},
		{instructions.FromSerialsOrAttachments, 1, "abc.123456", "", ""}, // in the text: not from an attachment
	}
	for _, tt := range tests {
		ts := toolstest.Shipped(t)
		ts.Tools[FuncCheckWarranty].Args["serial_number"].From = tt.policy
		d, err := New(Config{Tools: ts, Routes: (&fakeRoutes{}).routes(FuncCheckWarranty, FuncCreateTicket, FuncSendEmail, FuncNotifyStaff)})
		if err != nil {
			t.Fatal(err)
		}
		s := d.Session(testMessage(), testScenario(t, false), "k")
		s.SetAttachmentsSeen(tt.seen)
		s.Call(context.Background(), FuncCheckWarranty, map[string]any{"serial_number": tt.value})
		r := s.Records()[0]
		got := agent.ErrorCode("")
		if r.Error != nil {
			got = r.Error.Code
		}
		if got != tt.want || r.SerialSource != tt.source {
			t.Errorf("%s, %d seen, %q: %q, serial_source %q; want %q, %q", tt.policy, tt.seen, tt.value, got, r.SerialSource, tt.want, tt.source)
		}
	}
}
