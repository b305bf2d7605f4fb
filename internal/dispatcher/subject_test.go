package dispatcher_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"triage/internal/dispatcher"
	"triage/internal/testkit/toolstest"
)

// A subject of 995-998 characters is answered: "Re: " + subject is over
// the line limit, so the pipeline shortens the reply's subject (keeping the
// ticket tag) instead of refusing the reply.
func TestLongSubjectIsAnswered(t *testing.T) {
	for _, n := range []int{995, 996, 997, 998} {
		for _, ticket := range []string{"", "TKT-000042"} {
			f := &fakeSender{}
			routes := okRoutes(dispatcher.FuncCheckWarranty, dispatcher.FuncCreateTicket, dispatcher.FuncNotifyStaff)
			routes[dispatcher.FuncSendEmail] = dispatcher.For(dispatcher.SendEmail(f, "Support <support@example.com>", "example.com"))
			d, err := dispatcher.New(dispatcher.Config{Tools: toolstest.Shipped(t), Builtins: routes})
			if err != nil {
				t.Fatal(err)
			}
			msg := toolstest.Message()
			msg.ReplyTo = msg.From.Address // the sender's own subject comes back to them only
			msg.Subject = "Reklamacja " + strings.Repeat("ż", n-len("Reklamacja "))
			s := d.Session(msg, toolstest.Scenario(t, false), "k")
			s.SetTicket(ticket)
			env := s.Call(context.Background(), dispatcher.FuncSendEmail, map[string]any{"to": "jan@example.com", "subject": "Re: " + msg.Subject, "body": "Dzień dobry"}).Envelope()
			if env["ok"] != true {
				t.Errorf("%d characters, ticket %q: send_email refused: %v", n, ticket, env)
				continue
			}
			got := f.got[0].Subject
			if len(got) > 998 || !utf8.ValidString(got) || !strings.HasPrefix(got, "Re: Reklamacja żż") {
				t.Errorf("%d characters, ticket %q: reply subject of %d bytes %q...", n, ticket, len(got), got[:min(len(got), 40)])
			}
			if ticket != "" && !strings.HasSuffix(got, " ["+ticket+"]") {
				t.Errorf("%d characters: reply subject lost its ticket tag: ...%q", n, got[max(0, len(got)-30):])
			}
		}
	}
}
