package console

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"triage/internal/replies"
)

// How the conversation page words what it shows: plain states instead of
// the ledger's and the reply memory's names, and a function call's
// arguments and result as readable fields (their JSON one click away).

// label is a state in plain words, with the badge class that colours it.
type label struct{ Words, Class string }

// emailLabel says where an email stands, for a person.
func emailLabel(ev emailView) label {
	if ev.Closed != nil {
		return label{string(ev.Closed.Action), "closed"}
	}
	if r := ev.Reply; r != nil {
		switch {
		case r.Waiting:
			return label{"draft waiting", "draft"}
		case r.Outcome == replies.DraftRejected:
			return label{"draft rejected", "rejected"}
		case r.Outcome == replies.DraftSentAsIs:
			return label{"draft sent as is", "replied"}
		case r.Outcome == replies.DraftEdited:
			return label{"draft sent edited", "replied"}
		case r.Outcome == replies.DraftDiscarded:
			return label{"draft never sent", "discarded"}
		case r.State == replies.DraftSending:
			return label{"sent, not confirmed", "send_unconfirmed"}
		case r.State == replies.ReplySent:
			return label{"answered by triage", "replied"}
		case r.State == replies.ReplyPending:
			return label{"sending", "draft"}
		case r.State == replies.ReplyNeedsHuman:
			return label{"sent, not confirmed", "send_unconfirmed"}
		}
	}
	if words, ok := stateWords[string(ev.Entry.State)]; ok {
		return label{words, string(ev.Entry.State)}
	}
	return label{strings.ReplaceAll(string(ev.Entry.State), "_", " "), string(ev.Entry.State)}
}

// replyLabel says where our reply or draft stands.
func replyLabel(r *replyView) label {
	return emailLabel(emailView{Reply: r})
}

// stateWords are the ledger's states in plain words.
var stateWords = map[string]string{
	"replied":         "answered by triage",
	"drafted":         "drafted",
	"failed":          "failed",
	"needs_human":     "needs a person",
	"over_limit":      "over a reply limit",
	"retry_requested": "retry asked",
	"skipped":         "skipped",
	"processing":      "being handled",
	"retried":         "handled again",
}

// field is one readable line of a call's arguments or result.
type field struct{ Key, Value string }

// fieldsOf turns a JSON object into lines, its keys sorted: strings as
// written, numbers and booleans as JSON, lists of plain values joined
// with commas, anything deeper as compact JSON.
func fieldsOf(v map[string]any) []field {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]field, 0, len(keys))
	for _, k := range keys {
		out = append(out, field{strings.ReplaceAll(k, "_", " "), valueText(v[k])})
	}
	return out
}

func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return "-"
	case string:
		return x
	case bool, float64, json.Number:
		return fmt.Sprint(x)
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			switch e.(type) {
			case map[string]any, []any:
				return compactJSON(v)
			}
			parts = append(parts, valueText(e))
		}
		return strings.Join(parts, ", ")
	}
	return compactJSON(v)
}

func compactJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return "(not JSON)"
	}
	return strings.TrimSpace(b.String())
}

// conversationBadge says where the conversation stands: taken over by a
// person, a draft waiting, answered by triage (a reply triage sent), or
// with triage (nothing sent yet).
func conversationBadge(cv *conversationView) label {
	if cv.Ticket != nil && cv.Ticket.AgentDisabled {
		return label{"taken over by " + cmp.Or(cv.Ticket.Owner, "a person"), "person"}
	}
	sent := false
	for _, e := range cv.Emails {
		if e.Reply != nil && e.Reply.Waiting {
			return label{"draft waiting", "draft"}
		}
		if e.Reply != nil && e.Reply.Kind != replies.KindDraft && e.Reply.State == replies.ReplySent {
			sent = true
		}
	}
	if sent {
		return label{"answered by triage", "triage"}
	}
	if len(cv.Emails) > 0 {
		return cv.Emails[0].Label
	}
	return label{"with triage", ""}
}

// words writes a rule's name (statutory, price_reduction) as words.
func words(s string) string { return strings.ReplaceAll(s, "_", " ") }
