package instructions_test

import (
	"testing"

	embedded "triage/instructions"
	"triage/internal/instructions"
)

// complaint: true, false or if_serial; a scenario without it handles no
// complaints.
func TestComplaint(t *testing.T) {
	for _, tc := range []struct {
		line             string
		serial, noSerial bool
	}{
		{"", false, false},
		{"complaint: false\n", false, false},
		{"complaint: true\n", true, true},
		{"complaint: if_serial\n", true, false},
	} {
		f := baseFS()
		gamma(declaring(gammaHead+tc.line, ""), "Body.\n")(f)
		set, err := instructions.LoadScenarios(f, routes)
		if err != nil {
			t.Fatalf("%q: Load: %v", tc.line, err)
		}
		sc := set.Get("gamma")
		if got := sc.IsComplaint(true); got != tc.serial {
			t.Errorf("%q: IsComplaint(serial) = %v, want %v", tc.line, got, tc.serial)
		}
		if got := sc.IsComplaint(false); got != tc.noSerial {
			t.Errorf("%q: IsComplaint(no serial) = %v, want %v", tc.line, got, tc.noSerial)
		}
	}
}

// The shipped warranty claims are complaints; an escalation is one when it
// names a serial.
func TestShippedComplaints(t *testing.T) {
	set, err := instructions.LoadScenarios(embedded.FS, routes)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]instructions.Complaint{
		"valid-warranty": instructions.ComplaintAlways, "invalid-warranty": instructions.ComplaintAlways,
		"missing-info": instructions.ComplaintAlways, "escalation": instructions.ComplaintIfSerial,
		"product-question": instructions.ComplaintNever, "out-of-scope": instructions.ComplaintNever,
		"follow-up": instructions.ComplaintNever,
	} {
		if got := set.Get(name).Complaint; got != want {
			t.Errorf("%s: complaint = %q, want %q", name, got, want)
		}
	}
}
