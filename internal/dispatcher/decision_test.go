package dispatcher_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"triage/internal/clients/warranty"
	"triage/internal/decision"
	"triage/internal/dispatcher"
	"triage/internal/instructions"
	"triage/internal/testkit/toolstest"
)

func TestReceivedAt(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	date := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	internal := time.Date(2026, 11, 20, 9, 5, 0, 0, time.UTC)
	tests := []struct {
		name              string
		date, given, want time.Time
	}{
		{"the earlier of the two", date, internal, date},
		{"the given one when earlier", internal, date, date},
		{"only the Date", date, time.Time{}, date},
		{"only the given one", time.Time{}, internal, internal},
		{"a Date in the future is not plausible", now.Add(time.Hour), internal, internal},
		{"a little clock skew is", now.Add(time.Minute), time.Time{}, now.Add(time.Minute)},
		{"a Date before 2000 is not plausible", time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC), internal, internal},
		{"neither: now", time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC), now.AddDate(1, 0, 0), now},
		{"nothing: now", time.Time{}, time.Time{}, now},
	}
	for _, tt := range tests {
		if got := dispatcher.ReceivedAt(tt.date, tt.given, now); !got.Equal(tt.want) {
			t.Errorf("%s: ReceivedAt = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// fakeRegistry answers every serial with res.
type fakeRegistry struct{ res warranty.Result }

func (f fakeRegistry) Check(_ context.Context, sn string) (warranty.Result, error) {
	r := f.res
	r.SerialNumber = sn
	return r, nil
}

// check_warranty under a policy puts the decision in its result, counted
// from the email's time of receipt, and the verdict carries it.
func TestCheckWarrantyDecides(t *testing.T) {
	pol, err := instructions.LoadPolicy(nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	reg := fakeRegistry{warranty.Result{Status: warranty.StatusExpired, ExpirationDate: "2026-03-31", PurchaseDate: "2025-03-24", Buyer: "consumer"}}
	for _, tt := range []struct {
		name     string
		policy   *decision.Policy
		date     time.Time
		given    time.Time
		answerBy string
	}{
		{"from the message's Date", pol, time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC), time.Time{}, "2026-12-04"},
		{"from the earlier time the caller gives", pol, time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC), time.Date(2026, 11, 18, 7, 0, 0, 0, time.UTC), "2026-12-02"},
		{"no Date: now", pol, time.Time{}, time.Time{}, "2026-12-12"},
		{"no policy: no decision", nil, time.Time{}, time.Time{}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := dispatcher.New(dispatcher.Config{
				Tools:    toolstest.Shipped(t),
				Builtins: map[string]dispatcher.Func{dispatcher.FuncCheckWarranty: dispatcher.For(dispatcher.CheckWarranty(reg, tt.policy))},
				Routes:   okRoutes(dispatcher.FuncCreateTicket, dispatcher.FuncSendEmail, dispatcher.FuncNotifyStaff),
				Now:      func() time.Time { return now },
			})
			if err != nil {
				t.Fatal(err)
			}
			msg := toolstest.Message()
			msg.Date = tt.date
			s := d.Session(msg, toolstest.Scenario(t, false), "k")
			s.SetOptions(dispatcher.Options{Received: tt.given})
			env := s.Call(context.Background(), dispatcher.FuncCheckWarranty, map[string]any{"serial_number": "ABC-123456"}).Envelope()
			res, _ := env["result"].(map[string]any)
			dec, _ := res["decision"].(map[string]any)
			v := s.Verdict()
			if tt.answerBy == "" {
				if dec != nil || v.Decision != nil {
					t.Errorf("a decision without a policy: %v, %+v", dec, v.Decision)
				}
				return
			}
			if dec["basis"] != "statutory" || dec["answer_by"] != tt.answerBy {
				t.Errorf("result decision = %v, want statutory answered by %s", dec, tt.answerBy)
			}
			if v.Decision == nil || v.Decision.Basis != decision.Statutory || v.Decision.AnswerBy.String() != tt.answerBy {
				t.Errorf("verdict decision = %+v", v.Decision)
			}
			if rs, _ := dec["remedies"].([]any); len(rs) == 0 || rs[0] != "repair" || strings.Contains(strings.Join(toStrings(rs), ","), "paid") {
				t.Errorf("remedies = %v", dec["remedies"])
			}
		})
	}
}

func toStrings(v []any) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i], _ = x.(string)
	}
	return out
}
