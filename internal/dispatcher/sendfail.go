package dispatcher

import (
	"errors"
	"fmt"

	"triage"
	"triage/internal/agent"
)

// CodeSendFailed is the error code of a reply the mail server refused for
// good (a 5xx reply): trying again cannot help, and the loop ends; the
// email fails with the reason of the same name.
const CodeSendFailed = agent.ErrorCode(triage.ReasonSendFailed)

// SendFailure is a reply or notice the mail server refused or could not
// take: its reply code and text when it answered, the SMTP step, and whether
// a later attempt may succeed.
type SendFailure struct {
	Function string `json:"function"`       // the function whose mail failed (send_email, notify_staff)
	Op       string `json:"step"`           // the SMTP step: dial, tls, starttls, auth, mail, rcpt, data
	Code     int    `json:"code,omitempty"` // the server's reply code, 0 when it gave none
	Text     string `json:"text"`           // the server's reply text, or the transport error
	// Temporary: a later attempt may succeed (a 4xx reply, a network
	// error); otherwise the server refused for good (5xx).
	Temporary bool `json:"temporary"`
}

// Detail is the one-line description an outcome and the ledger carry.
func (f *SendFailure) Detail() string {
	kind := "permanent"
	if f.Temporary {
		kind = "temporary"
	}
	if f.Code != 0 {
		return fmt.Sprintf("%s: the mail server refused the message at %s: %d %s (%s)", f.Function, f.Op, f.Code, f.Text, kind)
	}
	return fmt.Sprintf("%s: the message could not be handed to the mail server at %s: %s (%s)", f.Function, f.Op, f.Text, kind)
}

// sendFailure describes err when it is a failed delivery
// (triage.Undelivered), else nil.
func sendFailure(function string, err error) *SendFailure {
	var u triage.Undelivered
	if !errors.As(err, &u) {
		return nil
	}
	d, ok := u.Undelivered()
	if !ok {
		return nil
	}
	return &SendFailure{Function: function, Op: d.Step, Code: d.Code, Text: d.Text, Temporary: d.Temporary}
}

// SendFailure is the last failed delivery of this email (nil when none):
// the processor ends an email whose reply did not go out with it.
func (s *Session) SendFailure() *SendFailure {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sendFail
}

// Halt ends the model loop after a permanent delivery failure, a refusal
// marked Error.Halt, or a refusal that settles the email (settles)
// (agent.Tools): the server or a limit said no for good, and another model
// turn cannot change that.
func (s *Session) Halt() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.halt != nil {
		return s.halt
	}
	if s.sendFail != nil && !s.sendFail.Temporary {
		return errors.New("dispatcher: " + s.sendFail.Detail())
	}
	return nil
}

// settles reports whether de, the refusal of a call of name, leaves the
// reply no way out for this email: a staff notice a notice bound refused
// (the bound stands for the hour) when the scenario's final function needs
// a notice to have succeeded first and none has. The email is failed
// already; another model turn would only be paid for.
func (s *Session) settles(name string, de *Error) bool {
	if !de.Refused || name != FuncNotifyStaff || !de.Reason.Limit() || s.runs[FuncNotifyStaff] > 0 || s.sc == nil {
		return false
	}
	final := s.d.tools.Get(s.d.tools.FinalOf(s.sc))
	if final == nil {
		return false
	}
	for _, r := range final.Requires {
		if r.Call == FuncNotifyStaff {
			return true
		}
	}
	return false
}
