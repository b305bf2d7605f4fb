package instructions

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// Complaint is a scenario's complaint: frontmatter, which says whether the
// emails it handles are consumer complaints: ComplaintNever (false, the
// default), ComplaintAlways (true) or ComplaintIfSerial (if_serial: when the
// email names a serial number, e.g. an escalation about a claim).
type Complaint string

// The values of Complaint.
const (
	ComplaintNever    Complaint = ""
	ComplaintAlways   Complaint = "true"
	ComplaintIfSerial Complaint = "if_serial"
)

// UnmarshalYAML reads true, false or if_serial.
func (c *Complaint) UnmarshalYAML(n *yaml.Node) error {
	var b bool
	if n.Kind == yaml.ScalarNode && n.Decode(&b) == nil && n.Tag == "!!bool" {
		*c = ComplaintNever
		if b {
			*c = ComplaintAlways
		}
		return nil
	}
	var s string
	if err := n.Decode(&s); err != nil {
		return fmt.Errorf("complaint: want true, false or %s", ComplaintIfSerial)
	}
	*c = Complaint(s)
	return nil
}

func (c Complaint) valid() bool {
	return c == ComplaintNever || c == ComplaintAlways || c == ComplaintIfSerial
}

// IsComplaint reports whether an email handled under sc is a consumer
// complaint; serial says whether it names a serial number.
func (sc *Scenario) IsComplaint(serial bool) bool {
	if sc == nil {
		return false
	}
	return sc.Complaint == ComplaintAlways || (sc.Complaint == ComplaintIfSerial && serial)
}
