// Look-ups over the dispatcher's call records of one email.

package processor

import (
	"triage/internal/agent"
	"triage/internal/dispatcher"
)

// okRecord is the first successful call of name, or nil.
func okRecord(recs []dispatcher.Record, name string) *dispatcher.Record {
	for i := range recs {
		if recs[i].Name == name && recs[i].OK {
			return &recs[i]
		}
	}
	return nil
}

// refusedFor is the first call of name refused for a reason that leaves
// the email to a person (dispatcher.Error.Reason), or nil.
func refusedFor(recs []dispatcher.Record, name string) *dispatcher.Record {
	for i := range recs {
		if recs[i].Name == name && recs[i].Reason != "" && recs[i].Error != nil {
			return &recs[i]
		}
	}
	return nil
}

// lastError is the error of the last call to name, or nil.
func lastError(recs []dispatcher.Record, name string) *agent.ToolError {
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Name == name {
			return recs[i].Error
		}
	}
	return nil
}

// blocked counts the calls the dispatcher refused.
func blocked(recs []dispatcher.Record) int {
	n := 0
	for _, r := range recs {
		if r.Blocked {
			n++
		}
	}
	return n
}
