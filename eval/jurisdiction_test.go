package eval

import (
	"context"
	"strings"
	"testing"
)

// input.jurisdiction decides the case's mocked registry answers under
// that jurisdiction; one the policy does not declare fails the case,
// naming itself and the declared ones.
func TestCaseJurisdiction(t *testing.T) {
	body := `scenario_id: jurisdiction_uk
input:
  jurisdiction: uk
  email: {subject: Kettle, body: "My kettle SN-24088-PL stopped heating.", from: a@example.com, received: "2026-11-20T09:00:00Z"}
  mock_function_responses:
    check_warranty: {serial_number: SN-24088-PL, status: expired, expiration_date: "2024-10-15", purchase_date: "2022-10-15", buyer: consumer}
expected_output:
  decision: {basis: statutory, jurisdiction: uk}
`
	r := newTestRunner(t, testSet(t), Config{})
	rr := r.RunCase(context.Background(), loadOne(t, t.TempDir(), "uk.yaml", body))
	if !rr.Passed {
		t.Errorf("uk: %v", rr.Failures)
	}
	rr = r.RunCase(context.Background(), loadOne(t, t.TempDir(), "pl.yaml", strings.Replace(body, "jurisdiction: uk\n  email", "email", 1)))
	if rr.Passed || !strings.Contains(strings.Join(rr.Failures, "\n"), "expected statutory, got none") {
		t.Errorf("the default (pl): passed %v, failures %v; want statutory expected, none got", rr.Passed, rr.Failures)
	}
	rr = r.RunCase(context.Background(), loadOne(t, t.TempDir(), "fr.yaml", strings.Replace(body, "jurisdiction: uk\n  email", "jurisdiction: fr\n  email", 1)))
	if msg := strings.Join(rr.Failures, "\n") + rr.Error; rr.Passed || !strings.Contains(msg, `"fr"`) || !strings.Contains(msg, "de, eu, pl, uk") {
		t.Errorf("fr: passed %v, %q; want a failure naming fr and de, eu, pl, uk", rr.Passed, msg)
	}
}
