// The builtin tools, the functions tools.yaml binds with "builtin:":
// check_warranty, create_ticket, send_email and notify_staff. Each is a
// typed handler (its arguments and its result are Go structs) adapted to a
// Func by For; the policies have passed before a handler runs.

package dispatcher

import (
	"context"
	"encoding/json"
	"fmt"

	"triage"
	"triage/internal/clients/mail"
	"triage/internal/clients/tickets"
	"triage/internal/clients/warranty"
	"triage/internal/decision"
)

// Handler is a typed function implementation: in is the call's arguments
// decoded into In; the Out it returns is what the model sees, encoded as
// JSON.
type Handler[In, Out any] func(ctx context.Context, call *Call, in In) (Out, error)

// A result that implements receipted carries the reply it sent or drafted;
// one that implements ticketed names the ticket it opened or found. For puts
// them in the dispatcher's Result, where the pipeline reads them.
type (
	receipted interface{ receipt() *triage.Receipt }
	ticketed  interface{ ticket() string }
	decided   interface{ decided() *decision.Decision }
)

// For adapts h to a Func: the arguments are decoded into In, the
// result encoded into the map the model sees, and the typed receipt and
// ticket carried beside it.
func For[In, Out any](h Handler[In, Out]) Func {
	return func(ctx context.Context, call *Call) (Result, error) {
		var in In
		if err := decode(call.Args, &in); err != nil {
			return Result{}, &Error{Code: CodeInvalidArgs, Message: fmt.Sprintf("%s: %v", call.Name, err), Refused: true}
		}
		out, err := h(ctx, call, in)
		if err != nil {
			return Result{}, err
		}
		return ResultOf(out)
	}
}

// ResultOf is a builtin's result as the dispatcher takes it: encoded into
// the map the model sees, with the typed receipt and ticket it carries
// beside it. Stand-ins for the builtins (eval's mocks) build their results
// with it too.
func ResultOf[Out any](out Out) (Result, error) {
	v, err := encode(out)
	if err != nil {
		return Result{}, err
	}
	res := Result{Value: v}
	if r, ok := any(out).(receipted); ok {
		res.Receipt = r.receipt()
	}
	if t, ok := any(out).(ticketed); ok {
		res.TicketID = t.ticket()
	}
	if d, ok := any(out).(decided); ok {
		res.Decision = d.decided()
	}
	return res, nil
}

// Intended is the reply a call to the final function asks for, from its
// arguments (send_email's to and subject): what a dry run reports, where
// nothing is sent, and what a final function that gives no receipt (an
// http or mcp binding) reports. An argument of another type is left empty.
func Intended(args map[string]any) triage.Receipt {
	var in SendEmailArgs
	_ = decode(args, &in) // the schema validated the arguments; a field of another type stays empty
	return triage.Receipt{To: in.To, Subject: in.Subject}
}

// Routes builds the builtins (Config.Builtins), by builtin name.
// check_warranty decides under p (nil: no decision); from is our From address, domain the right-hand side of the deterministic
// reply Message-IDs, n what the staff notices read besides the email.
func Routes(w warranty.Checker, p *decision.Policy, t tickets.Creator, m mail.Sender, from, domain string, n Notices) map[string]Func {
	return map[string]Func{
		FuncCheckWarranty: For(CheckWarranty(w, p)),
		FuncCreateTicket:  For(CreateTicket(t)),
		FuncSendEmail:     For(SendEmail(m, from, domain)),
		FuncNotifyStaff:   For(NotifyStaff(m, from, domain, n)),
	}
}

// decode turns the model's arguments (JSON values) into in.
func decode(args map[string]any, in any) error {
	b, err := json.Marshal(args)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, in)
}

// encode turns a result into the JSON object the model sees.
func encode(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("dispatcher: encode result: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("dispatcher: encode result: %w", err)
	}
	return m, nil
}
