package replay

import (
	"encoding/json"
	"slices"

	"triage"
	"triage/internal/decision"
	"triage/internal/dispatcher"
	"triage/internal/processor"
)

// View is what replay compares of an outcome: what the customer would see
// happen.
type View struct {
	Scenario string        `json:"scenario"`
	Status   triage.Status `json:"status"`
	Reason   triage.Reason `json:"reason,omitempty"`
	// Calls are the functions that ran (not refused, not failed), in order.
	Calls     []string `json:"calls"`
	ReplyMode string   `json:"reply_mode"` // send, draft, or none
	Escalated bool     `json:"escalated"`
	// Decision is the decision reached (nil: none was).
	Decision *Decision `json:"decision,omitempty"`
	// Commitments are what the reply promised and the decision allowed,
	// sorted (empty: the scenario declares none or no reply promised).
	Commitments []decision.Commitment `json:"commitments,omitempty"`
}

// Decision is what replay compares of a decision: its basis and its
// remedies in their legal order.
type Decision struct {
	Basis    decision.Basis    `json:"basis"`
	Remedies []decision.Remedy `json:"remedies"`
}

func viewOf(o processor.Outcome) View {
	v := View{Scenario: o.Scenario, Status: o.Status, Reason: o.Reason, Calls: []string{}, Escalated: o.Escalated, ReplyMode: "none"}
	for _, c := range o.FunctionCalls {
		if c.OK && !c.Blocked {
			v.Calls = append(v.Calls, c.Name)
		}
	}
	if d := o.Decision; d != nil {
		v.Decision = &Decision{Basis: d.Basis, Remedies: slices.Clone(d.Remedies)}
		if v.Decision.Remedies == nil {
			v.Decision.Remedies = []decision.Remedy{}
		}
	}
	if len(o.Commitments) > 0 {
		v.Commitments = slices.Sorted(slices.Values(o.Commitments))
	}
	switch o.Status {
	case triage.StatusReplied:
		v.ReplyMode = string(triage.ReplySend)
	case triage.StatusDrafted:
		v.ReplyMode = string(triage.ReplyDraft)
	}
	return v
}

func (v View) key() string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Kind is one way an outcome flips.
type Kind string

// The kinds of flip, in the order they are reported.
const (
	KindScenario  Kind = "scenario"
	KindStatus    Kind = "status"
	KindTicket    Kind = "ticket"
	KindCalls     Kind = "calls"
	KindReplyMode Kind = "reply_mode"
	KindEscalated Kind = "escalation"
	// KindDecision: the decision's basis or remedies differ (or one side
	// reached none).
	KindDecision Kind = "decision"
	// KindCommitments: the commitments the reply was allowed differ.
	KindCommitments Kind = "commitments"
)

// flipKinds names what differs between two views.
func flipKinds(old, new View) []Kind {
	var kinds []Kind
	if old.Scenario != new.Scenario {
		kinds = append(kinds, KindScenario)
	}
	if old.Status != new.Status || old.Reason != new.Reason {
		kinds = append(kinds, KindStatus)
	}
	if opensTicket(old) != opensTicket(new) {
		kinds = append(kinds, KindTicket)
	}
	if !slices.Equal(old.Calls, new.Calls) {
		kinds = append(kinds, KindCalls)
	}
	if old.ReplyMode != new.ReplyMode {
		kinds = append(kinds, KindReplyMode)
	}
	if old.Escalated != new.Escalated {
		kinds = append(kinds, KindEscalated)
	}
	if !sameDecision(old.Decision, new.Decision) {
		kinds = append(kinds, KindDecision)
	}
	if !slices.Equal(old.Commitments, new.Commitments) {
		kinds = append(kinds, KindCommitments)
	}
	return kinds
}

// sameDecision reports whether a and b have the same basis and remedies
// (or are both nil).
func sameDecision(a, b *Decision) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Basis == b.Basis && slices.Equal(a.Remedies, b.Remedies)
}

// opensTicket reports whether a ticket was opened.
func opensTicket(v View) bool { return slices.Contains(v.Calls, dispatcher.FuncCreateTicket) }

// Side is one side's runs of one email.
type Side struct {
	View   View   `json:"outcome"`
	Agreed int    `json:"agreed"` // runs that gave View
	Runs   int    `json:"runs"`
	Detail string `json:"detail,omitempty"`
}

// The types of the JSON records.
const (
	TypeFlip     = "flip"     // every run of each side agrees and the outcome flips
	TypeUnstable = "unstable" // the runs of a side disagree
	TypeSummary  = "summary"  // the last record
)

// Record is one email whose outcome flips (or could not be told).
type Record struct {
	Type      string `json:"type"` // TypeFlip or TypeUnstable
	Input     string `json:"input"`
	MessageID string `json:"message_id,omitempty"`
	From      string `json:"from,omitempty"`
	Subject   string `json:"subject,omitempty"`
	Kinds     []Kind `json:"kinds,omitempty"`
	Baseline  Side   `json:"baseline"`
	New       Side   `json:"new"`
	stable    bool   // both sides agreed across runs
	hasBase   bool   // a baseline exists for the email
	readError error  // the input could not be read
}

// Summary counts a replay; it is the last JSON record.
type Summary struct {
	Type       string       `json:"type"` // TypeSummary
	Emails     int          `json:"emails"`
	Flips      int          `json:"flips"`
	ByKind     map[Kind]int `json:"flips_by_kind"`
	Unstable   int          `json:"unstable"`
	NoBaseline int          `json:"no_baseline"`
	Unreadable int          `json:"unreadable"`
	Runs       int          `json:"runs_per_side"`
	Baseline   string       `json:"baseline"`
}
