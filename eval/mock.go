package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"triage"
	"triage/internal/agent"
	"triage/internal/clients/tickets"
	"triage/internal/clients/warranty"
	"triage/internal/decision"
	"triage/internal/dispatcher"
)

// CodeNoMock is the error code of a call to a function the case gave no
// mock response for (check_warranty and any function without a default).
const CodeNoMock agent.ErrorCode = "no_mock"

// MockRoutes returns dispatcher routes for every name, fed from the case's
// mock_function_responses: a single response is returned on every call, a
// list gives one per successive call with the last repeating, and an error
// response makes the call fail with a *dispatcher.Error. Functions without a
// mock get the builtin's own result: send_email {message_id, to, status:
// sent} (status drafted when the reply mode is draft), create_ticket
// {ticket_id, status: created}, notify_staff {notified, message_ids};
// anything else fails with CodeNoMock. Each call gets a fresh copy of the
// response. Build new routes for every run: the sequences keep their
// position.
func MockRoutes(c *Case, names []string) map[string]dispatcher.Func {
	routes := make(map[string]dispatcher.Func, len(names))
	for _, name := range names {
		seq := &mockSeq{caseID: c.ID, name: name, responses: c.Mocks[name]}
		routes[name] = seq.call
	}
	return routes
}

type mockSeq struct {
	caseID    string
	name      string
	responses []MockResponse

	mu sync.Mutex
	n  int // calls so far
}

func (m *mockSeq) call(ctx context.Context, c *dispatcher.Call) (dispatcher.Result, error) {
	m.mu.Lock()
	m.n++
	n := m.n
	m.mu.Unlock()
	if len(m.responses) == 0 {
		return m.fallback(n, c)
	}
	r := m.responses[min(n, len(m.responses))-1]
	if r.Error != nil {
		return dispatcher.Result{}, &dispatcher.Error{Code: agent.ErrorCode(r.Error.Code), Message: r.Error.Message}
	}
	res, _ := jsonValue(r.Result).(map[string]any)
	if res == nil {
		res = map[string]any{}
	}
	return m.typed(c, res), nil
}

// decided wraps check_warranty's route f so that its result carries the
// decision as production's does: the mock's own decision when it gives one,
// else the one p (the instructions' policy) reaches from the mocked
// registry fields (status, expiration_date, purchase_date, buyer) at the
// email's time of receipt. Without p, or for a failed call, f's result.
func decided(p *decision.Policy, f dispatcher.Func) dispatcher.Func {
	return func(ctx context.Context, c *dispatcher.Call) (dispatcher.Result, error) {
		res, err := f(ctx, c)
		if err != nil || res.Decision != nil || res.Value == nil {
			return res, err
		}
		if raw, ok := res.Value["decision"].(map[string]any); ok {
			var d decision.Decision
			if decodeResult(raw, &d) == nil && d.Basis != "" {
				res.Decision = &d
			}
			return res, nil
		}
		if p == nil {
			return res, nil
		}
		var w warranty.Result
		if decodeResult(res.Value, &w) != nil || w.Status == "" {
			return res, nil
		}
		if w.SerialNumber == "" {
			w.SerialNumber, _ = c.Args["serial_number"].(string)
		}
		d := decision.Decide(p, w, c.Received)
		var v map[string]any
		b, _ := json.Marshal(d)
		_ = json.Unmarshal(b, &v)
		res.Decision, res.Value["decision"] = &d, v
		return res, nil
	}
}

// typed reads a builtin's mocked result as the builtin's own result type,
// and completes a send_email result as the mail client's receipt does: "to"
// is the bare address the reply went to, unless the case gives one.
func (m *mockSeq) typed(c *dispatcher.Call, res map[string]any) dispatcher.Result {
	out := dispatcher.Result{Value: res}
	switch m.name {
	case dispatcher.FuncSendEmail:
		if to, _ := c.Args["to"].(string); res["to"] == nil && to != "" {
			res["to"] = bareOr(to)
		}
		var sent dispatcher.Sent
		if decodeResult(res, &sent) == nil {
			subject, _ := c.Args["subject"].(string)
			rc := sent.Receipt(subject)
			out.Receipt = &rc
		}
	case dispatcher.FuncCreateTicket:
		var t dispatcher.Ticket
		if decodeResult(res, &t) == nil {
			out.TicketID = t.TicketID
		}
	}
	return out
}

// decodeResult reads a mocked result (JSON values) into a result type.
func decodeResult(res map[string]any, v any) error {
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// bareOr is the lower-cased bare address of "Name <a@b>" or "a@b"
// (dispatcher.BareAddress), or s itself when it is not one address.
func bareOr(s string) string {
	if a, err := dispatcher.BareAddress(s); err == nil {
		return a
	}
	return s
}

// fallback answers a call the case gives no mock response for with the
// builtin's own result type, as the builtin would.
func (m *mockSeq) fallback(n int, c *dispatcher.Call) (dispatcher.Result, error) {
	switch m.name {
	case dispatcher.FuncSendEmail:
		in := dispatcher.Intended(c.Args)
		return dispatcher.ResultOf(dispatcher.SentOf(triage.Receipt{
			MessageID: fmt.Sprintf("<sent-%d.%s>", n, messageIDFor(m.caseID)), To: bareOr(in.To), Subject: in.Subject, Drafted: c.Draft,
		}, in.Subject))
	case dispatcher.FuncCreateTicket:
		return dispatcher.ResultOf(dispatcher.Ticket{Ticket: tickets.Ticket{TicketID: fmt.Sprintf("TKT-EVAL-%d", n), Status: tickets.StatusCreated}})
	case dispatcher.FuncNotifyStaff:
		return dispatcher.ResultOf(dispatcher.Notified{Notified: []string{"staff"}, MessageIDs: []string{fmt.Sprintf("<staff-%d.%s>", n, messageIDFor(m.caseID))}})
	}
	return dispatcher.Result{}, &dispatcher.Error{Code: CodeNoMock, Message: fmt.Sprintf("eval case %s gives no mock response for %s", m.caseID, m.name)}
}
