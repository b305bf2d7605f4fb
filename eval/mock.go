package eval

import (
	"context"
	"fmt"
	netmail "net/mail"
	"strings"
	"sync"

	"triage/internal/dispatcher"
)

// CodeNoMock is the error code of a call to a function the case gave no
// mock response for (check_warranty and any function without a default).
const CodeNoMock = "no_mock"

// MockRoutes returns dispatcher routes for every name, fed from the case's
// mock_function_responses: a single response is returned on every call, a
// list gives one per successive call with the last repeating, and an error
// response makes the call fail with a *dispatcher.Error. Functions without a
// mock get defaults: send_email answers {message_id, status: sent} (status
// drafted when the reply mode is draft),
// create_ticket {ticket_id, status: created}, notify_staff {notified,
// message_ids}, anything else fails with
// CodeNoMock. Each call gets a fresh copy of the response. Build new routes
// for every run: the sequences keep their position.
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

func (m *mockSeq) call(ctx context.Context, c *dispatcher.Call) (map[string]any, error) {
	m.mu.Lock()
	m.n++
	n := m.n
	m.mu.Unlock()
	if len(m.responses) == 0 {
		res, err := m.fallback(n, c.Draft)
		return m.receipt(c, res, err)
	}
	r := m.responses[min(n, len(m.responses))-1]
	if r.Error != nil {
		return nil, &dispatcher.Error{Code: r.Error.Code, Message: r.Error.Message}
	}
	res, _ := jsonValue(r.Result).(map[string]any)
	if res == nil {
		res = map[string]any{}
	}
	return m.receipt(c, res, nil)
}

// receipt completes a send_email result as the mail client's receipt does:
// "to" is the bare address the reply went to, unless the case gives one.
func (m *mockSeq) receipt(c *dispatcher.Call, res map[string]any, err error) (map[string]any, error) {
	if err != nil || m.name != dispatcher.FuncSendEmail || res["to"] != nil {
		return res, err
	}
	to, _ := c.Args["to"].(string)
	if to == "" {
		return res, nil
	}
	res["to"] = bareAddress(to)
	return res, nil
}

// bareAddress returns the lower-cased bare address of "Name <a@b>" or
// "a@b", or s itself when it does not parse.
func bareAddress(s string) string {
	if a, err := netmail.ParseAddress(s); err == nil {
		return strings.ToLower(a.Address)
	}
	return s
}

func (m *mockSeq) fallback(n int, draft bool) (map[string]any, error) {
	switch m.name {
	case dispatcher.FuncSendEmail:
		status := "sent"
		if draft {
			status = "drafted"
		}
		return map[string]any{
			"message_id": fmt.Sprintf("<sent-%d.%s>", n, messageIDFor(m.caseID)),
			"status":     status,
		}, nil
	case dispatcher.FuncCreateTicket:
		return map[string]any{"ticket_id": fmt.Sprintf("TKT-EVAL-%d", n), "status": "created"}, nil
	case dispatcher.FuncNotifyStaff:
		return map[string]any{"notified": []any{"staff"}, "message_ids": []any{fmt.Sprintf("<staff-%d.%s>", n, messageIDFor(m.caseID))}}, nil
	}
	return nil, &dispatcher.Error{Code: CodeNoMock, Message: fmt.Sprintf("eval case %s gives no mock response for %s", m.caseID, m.name)}
}
