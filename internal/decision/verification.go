// The verifier's reading of a reply: a second model lists the statements
// the trusted sources do not support, and the rules below decide what of
// its answer counts.

package decision

import (
	"fmt"
	"slices"
	"strings"

	"golang.org/x/text/unicode/norm"

	"triage/internal/clip"
)

// Verdict is what a verifier's reading of one reply came to.
type Verdict string

// Verdicts of a Verification.
const (
	// VerifyPass: the verifier listed no statement of the reply that the
	// sources do not support (statements it quoted wrongly are ignored).
	VerifyPass Verdict = "pass"
	// VerifyFlagged: it listed at least one, quoted from the reply: the
	// reply is refused.
	VerifyFlagged Verdict = "flagged"
	// VerifyError: it could not be asked, did not answer in time, or its
	// answer is not the requested JSON: the reply is not sent unverified.
	VerifyError Verdict = "error"
)

// StatementKind is what kind of claim an unsupported statement makes.
type StatementKind string

// The kinds a verifier may give a statement.
const (
	KindPromise StatementKind = "promise" // something the shop will do
	KindStatus  StatementKind = "status"  // the claim's or the guarantee's state
	KindDate    StatementKind = "date"
	KindAmount  StatementKind = "amount"
	KindID      StatementKind = "id" // a ticket, order, serial or case number
	KindContact StatementKind = "contact"
	KindFact    StatementKind = "fact" // any other fact, e.g. one only the customer asserted
)

// StatementKinds lists the kinds, in documentation order.
var StatementKinds = []StatementKind{KindPromise, KindStatus, KindDate, KindAmount, KindID, KindContact, KindFact}

// Statement is one statement of a reply a verifier found unsupported: its
// exact words (Quote), their kind and why.
type Statement struct {
	Quote  string        `json:"quote"`
	Kind   StatementKind `json:"kind"`
	Reason string        `json:"reason"`
}

func (s Statement) String() string { return fmt.Sprintf("%q (%s: %s)", s.Quote, s.Kind, s.Reason) }

// MaxStatements bounds the statements a verifier may list for one reply;
// an answer with more is a verifier error.
const MaxStatements = 20

// MaxQuote bounds a statement's quote and reason as an outcome keeps them.
const MaxQuote = 300

// Verification is one verifier reading of a reply: the verifier's model,
// the verdict, the statements it flagged (quoted from the reply) and those
// it listed with words the reply does not contain (Ignored: the verifier
// is a model, not trusted either), or the error that stopped it.
type Verification struct {
	Model   string      `json:"model"`
	Verdict Verdict     `json:"verdict"`
	Flagged []Statement `json:"flagged,omitempty"`
	Ignored []Statement `json:"ignored,omitempty"`
	Error   string      `json:"error,omitempty"`
}

// VerifyRequest is what a verifier reads: the reply's own words and the
// sources the shop trusts for it. Customer is the customer's message, for
// context only: it backs nothing.
type VerifyRequest struct {
	// Reply is the reply's body without its quoted lines (ReplyText).
	Reply string
	// Basis and Commitments are what the reply declares it is written on
	// and promises.
	Basis       Basis
	Commitments []Commitment
	// Decision is the decision computed for the email (nil when none).
	Decision *Decision
	// Results are the function results of the email (JSON), Instructions
	// the scenario's instructions.
	Results      []string
	Instructions string
	Customer     string
}

// ReplyText is body without the lines that start with ">" (the quoted
// history, the customer's words): what a reply itself says.
func ReplyText(body string) string {
	var b strings.Builder
	for line := range strings.Lines(body) {
		if strings.HasPrefix(strings.TrimLeft(line, " \t"), ">") {
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}

// Settle decides a verifier's answer about reply (its ReplyText): a listed
// statement whose quote the reply contains is flagged (compared in NFKC,
// lower case, white space and typographic quotes folded), any other is
// ignored; the verdict is flagged when one is flagged, else pass. Quotes
// and reasons are kept to MaxQuote bytes.
func Settle(model, reply string, listed []Statement) Verification {
	v := Verification{Model: model, Verdict: VerifyPass}
	text := FoldQuote(reply)
	for _, s := range listed {
		q := FoldQuote(s.Quote)
		in := q != "" && strings.Contains(text, q)
		s.Quote, s.Reason = clip.Bytes(s.Quote, MaxQuote, clip.Ellipsis), clip.Bytes(s.Reason, MaxQuote, clip.Ellipsis)
		if in {
			v.Flagged = append(v.Flagged, s)
		} else {
			v.Ignored = append(v.Ignored, s)
		}
	}
	if len(v.Flagged) > 0 {
		v.Verdict = VerifyFlagged
	}
	return v
}

// Failed is the verification of a verifier that could not give an answer.
func Failed(model string, err error) Verification {
	return Verification{Model: model, Verdict: VerifyError, Error: err.Error()}
}

// CheckStatements returns an error naming the first statement whose kind
// is not one of StatementKinds, or when there are more than MaxStatements.
func CheckStatements(listed []Statement) error {
	if len(listed) > MaxStatements {
		return fmt.Errorf("%d statements listed, at most %d", len(listed), MaxStatements)
	}
	for i, s := range listed {
		if !slices.Contains(StatementKinds, s.Kind) {
			return fmt.Errorf("statement %d: kind %q is not one of %s", i+1, s.Kind, joinKinds())
		}
	}
	return nil
}

func joinKinds() string {
	s := make([]string, len(StatementKinds))
	for i, k := range StatementKinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// quoteFold maps typographic quotes and apostrophes to plain ones.
var quoteFold = strings.NewReplacer("\u2018", "'", "\u2019", "'", "\u201a", "'", "\u201c", `"`, "\u201d", `"`, "\u201e", `"`, "\u00ab", `"`, "\u00bb", `"`)

// FoldQuote is s as a quote of a model's is compared with the text it
// quotes: NFKC, lower case, typographic quotes plain, its white space runs
// one space, trimmed.
func FoldQuote(s string) string {
	s = quoteFold.Replace(strings.ToLower(norm.NFKC.String(s)))
	return strings.Join(strings.Fields(s), " ")
}
