// The text of a staff notice: what notify_staff tells staff, every part
// of it bounded and marked as whose words it is.

package dispatcher

import (
	"cmp"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"triage/internal/clients/tickets"
	"triage/internal/clip"
	"triage/internal/message"
)

// cutMark ends a quoted text the notice cut.
const cutMark = "\n[... cut ...]"

// Bounds of a staff notice: everything in it comes from a stranger's email
// or from earlier mail about it, so every part is capped.
const (
	MaxNoticeQuoteBytes   = 64 << 10 // the customer's new text, quoted in full up to this
	MaxNoticeHistoryBytes = 8 << 10  // the quoted history the customer's email carried
	MaxNoticeSubjectWords = 120      // the customer's subject in the notice's Subject
	MaxNoticeSubjectBytes = 1000     // a subject, an address or an ID in the text
	MaxNoticeHistory      = 20       // ticket history lines, the newest kept
	MaxNoticeExcerpt      = 300      // bytes of a note shown in a history line
	MaxNoticeReplies      = 5        // earlier replies of triage shown, the newest kept
	MaxNoticeReplyBytes   = 4 << 10  // of each earlier reply
)

// Notice is what one staff notice says. Only Subject and Body turn it into
// text; every value that comes from mail headers goes through oneLine, and
// everything the customer or the model wrote is marked as theirs.
type Notice struct {
	// Escalates: the scenario takes the conversation away from triage
	// (escalation); otherwise its reply promises the customer a person.
	Escalates bool
	Draft     bool   // reply mode draft: the customer's reply is a draft a person sends
	Scenario  string // the scenario's name
	Msg       *message.Message
	// ReplyTo is where triage answers the customer (Call.ReplyTo; ""
	// reads as Msg's From address): the notice's Reply-To.
	ReplyTo  string
	TicketID string
	Ticket   *tickets.State // nil when unknown
	Told     []Told         // triage's earlier replies on the ticket, oldest first
	// CaseProblem says what of the case could not be read ("" when all).
	CaseProblem string
	Link        string // the conversation in the review console; "" for none
	// ModelSubject and ModelNote are notify_staff's arguments: the model's
	// words, written from the customer's email, never checked.
	ModelSubject, ModelNote string
}

// Told is one reply triage already sent (or drafted) on the ticket.
type Told struct {
	MessageID, Subject, Text string
	At                       time.Time
}

// Subject is the notice's subject: a label saying what it is, the ticket's
// tag, and the customer's subject as their words in quotes, on one line:
//
//	[triage escalation] [TKT-000123] Customer wrote: "Zepsuty ekspres"
func (n Notice) Subject() string {
	var b strings.Builder
	b.WriteString(n.label())
	if n.TicketID != "" {
		b.WriteString(" " + tickets.Tag(oneLine(n.TicketID)))
	}
	words := ""
	if n.Msg != nil {
		// Tags the customer wrote are not ours; a straight double quote
		// would end the quotation early.
		words = strings.ReplaceAll(tickets.WithTag(short(n.Msg.Subject, 4*MaxNoticeSubjectWords), ""), `"`, "'")
	}
	if words == "" {
		b.WriteString(" Customer wrote with no subject")
		return b.String()
	}
	b.WriteString(` Customer wrote: "` + clip.Bytes(words, MaxNoticeSubjectWords, "…") + `"`)
	return b.String()
}

func (n Notice) label() string {
	if n.Escalates {
		return "[triage escalation]"
	}
	return "[triage hand-off]"
}

// Body is the notice's text: what this is and what triage does, the facts
// triage checked, the customer's email quoted in full, the ticket and its
// history, what triage already told the customer, and last the model's
// note, marked unchecked. The checked facts come first: the model's note
// is written from a hostile email and may carry a forged "Customer:" block.
func (n Notice) Body() string {
	var b strings.Builder
	line := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }

	line("%s %s", n.label(), n.what())
	line("")
	line("What triage does: %s", n.next())
	if n.Msg != nil && customerAddress(n.Msg, n.ReplyTo) != "" {
		line("Reply to this notice to answer the customer directly: its Reply-To is their address.")
	}
	if n.Link != "" {
		line("The conversation in the console: %s", n.Link)
	}

	line("")
	line("Checked by triage (from the mail headers):")
	if m := n.Msg; m != nil {
		from := oneLine(m.From.Address)
		if name := oneLine(m.From.Name); name != "" {
			from = name + " <" + from + ">"
		}
		line("Customer: %s", from)
		if rt := oneLine(m.ReplyTo); rt != "" && !strings.EqualFold(rt, m.From.Address) {
			if strings.EqualFold(rt, replyAddress(m, n.ReplyTo)) {
				line("Reply-To: %s (differs from the From address; triage answers the Reply-To)", rt)
			} else {
				line("Reply-To: %s (outside the sender's domain and not authenticated: triage answers the From address, not this one)", rt)
			}
		}
		if id := oneLine(m.MessageID); id != "" {
			line("Message-ID: %s", id)
		} else {
			line("Message-ID: none")
		}
		if !m.Date.IsZero() {
			line("Date: %s", m.Date.UTC().Format(time.RFC3339))
		}
	}
	if n.TicketID != "" {
		line("Ticket: %s", oneLine(n.TicketID))
	}
	if n.Scenario != "" {
		line("Scenario: %s", oneLine(n.Scenario))
	}

	if m := n.Msg; m != nil {
		line("")
		line("The customer's email, their words (not checked by triage):")
		line("Subject: %s", short(m.Subject, MaxNoticeSubjectBytes))
		b.WriteString(quote(clip.Bytes(m.Text, MaxNoticeQuoteBytes, cutMark)))
		if strings.TrimSpace(m.Quoted) != "" {
			line("The earlier mail their email quotes:")
			b.WriteString(quote(clip.Bytes(m.Quoted, MaxNoticeHistoryBytes, cutMark)))
		}
	}

	if st := n.Ticket; st != nil {
		line("")
		n.ticket(&b, st)
	}
	if len(n.Told) > 0 {
		line("")
		line("What triage already told the customer on this ticket:")
		for _, t := range n.Told {
			line("On %s, %q (%s):", stamp(t.At), short(t.Subject, MaxNoticeSubjectBytes), short(t.MessageID, MaxNoticeSubjectBytes))
			b.WriteString(quote(clip.Bytes(t.Text, MaxNoticeReplyBytes, cutMark)))
		}
	}
	if n.CaseProblem != "" {
		line("")
		line("Not shown: %s", oneLine(n.CaseProblem))
	}

	line("")
	line("The assistant's note (written by the model from the customer's email, not checked):")
	line("Subject: %s", short(n.ModelSubject, MaxNoticeSubjectBytes))
	b.WriteString(strings.TrimRight(n.ModelNote, "\n") + "\n")
	return b.String()
}

// what says in one sentence what the notice hands over.
func (n Notice) what() string {
	if n.Escalates {
		return "This email needs a person: triage escalated it to staff."
	}
	return "triage's reply to this email tells the customer that a person will follow up."
}

// next says what triage will do after this notice, as far as it is known
// when the notice goes: the reply to the customer goes after it (it waits
// for a successful notice), so the notice never says it went.
func (n Notice) next() string {
	reply := "reply to the customer"
	if n.Draft {
		reply = "leave a reply to the customer as a draft, for a person to send"
	}
	switch {
	case n.Escalates && n.TicketID != "":
		return "triage will " + reply + " to acknowledge the email, and then stop answering this conversation: " +
			"the customer's next email waits for a person. If the acknowledgement does not go out, a second notice says so."
	case n.Escalates:
		return "triage will " + reply + " to acknowledge the email. If it does not go out, a second notice says so."
	}
	return "triage will " + reply + " saying that a person will follow up; it keeps answering this conversation " +
		"until a person takes it over (replying to the customer does)."
}

// ticket writes the ticket and its history (this email left out: it is
// quoted in full).
func (n Notice) ticket(b *strings.Builder, st *tickets.State) {
	head := fmt.Sprintf("Ticket %s: status %s", oneLine(st.TicketID), oneLine(st.Status))
	if st.SerialNumber != "" {
		head += ", serial " + oneLine(st.SerialNumber)
	}
	if !st.CreatedAt.IsZero() {
		head += ", opened " + stamp(st.CreatedAt)
	}
	if st.AgentDisabled {
		head += ", taken over by " + oneLine(st.Owner)
	}
	fmt.Fprintf(b, "%s\n", head)
	if s := short(st.Summary, MaxNoticeExcerpt); s != "" {
		fmt.Fprintf(b, "Summary (the customer's words): %s\n", s)
	}
	notes := map[string]tickets.Note{}
	for _, nt := range st.Notes {
		notes[nt.MessageID] = nt
	}
	current := ""
	if n.Msg != nil {
		current = n.Msg.MessageID
	}
	var shown []tickets.Message
	for _, m := range st.Messages {
		if current == "" || m.MessageID != current { // this email is quoted in full above
			shown = append(shown, m)
		}
	}
	if len(shown) > MaxNoticeHistory {
		fmt.Fprintf(b, "History (the newest %d of %d, oldest first):\n", MaxNoticeHistory, len(shown))
		shown = shown[len(shown)-MaxNoticeHistory:]
	} else if len(shown) > 0 {
		b.WriteString("History (oldest first):\n")
	}
	for _, m := range shown {
		who := "the customer"
		switch {
		case m.Direction == tickets.Outbound && n.told(m.MessageID):
			who = "triage replied"
		case m.Direction == tickets.Outbound:
			who = "a reply from " + cmp.Or(short(m.From, MaxNoticeSubjectBytes), "a person")
		case notes[m.MessageID].From == NoteAuthor:
			who = "triage noted"
		}
		l := fmt.Sprintf("- %s %s", stamp(m.At), who)
		if s := short(m.Subject, MaxNoticeExcerpt); s != "" {
			l += fmt.Sprintf(": %q", s)
		}
		if t := short(notes[m.MessageID].Text, MaxNoticeExcerpt); t != "" {
			l += " - " + t
		}
		b.WriteString(l + "\n")
	}
}

// NoteAuthor is the From of the notes triage itself adds to a ticket (a
// reply that could not be sent, what became of a hand-off); they never
// count as the customer's messages.
const NoteAuthor = "triage"

func (n Notice) told(id string) bool {
	for _, t := range n.Told {
		if t.MessageID == id {
			return true
		}
	}
	return false
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "(no date)"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// oneLine is s as one line of text: line breaks, other control characters,
// Unicode line and paragraph separators and bidirectional controls are
// dropped (each becomes a space), and runs of spaces are one. Every header
// value a notice shows goes through it, so none can start a line of its
// own.
func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || unicode.In(r, unicode.Zl, unicode.Zp, unicode.Bidi_Control) || r == utf8.RuneError
	}), " ")
}

// quote prefixes every line of text with "> " (line breaks normalized,
// control characters other than tab dropped); "" is one line "> ".
func quote(text string) string {
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	text = strings.Map(func(r rune) rune {
		if r != '\n' && r != '\t' && (unicode.IsControl(r) || unicode.In(r, unicode.Zl, unicode.Zp, unicode.Bidi_Control)) {
			return -1
		}
		return r
	}, strings.TrimRight(text, "\n"))
	var b strings.Builder
	for _, l := range strings.Split(text, "\n") {
		b.WriteString(strings.TrimRight("> "+l, " ") + "\n")
	}
	return b.String()
}

// short is s as one line (oneLine) of at most n bytes, "…" marking a cut;
// only the first bytes of a long s are looked at.
func short(s string, n int) string {
	cut := len(s) > 4*n
	s = oneLine(clip.Bytes(s, 4*n, ""))
	if cut || len(s) > n {
		return clip.Bytes(s, n, "") + "…"
	}
	return s
}
