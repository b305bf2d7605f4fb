package guard

import (
	"net/textproto"
	"regexp"
	"sort"
	"strings"

	"triage"
	"triage/internal/message"
)

// canonicalKey is a header name as Message.Header keys it.
func canonicalKey(k string) string { return textproto.CanonicalMIMEHeaderKey(strings.TrimSpace(k)) }

// complaintSubject starts the subject of Outlook.com's (Hotmail's)
// complaint reports (JMRP), which come as multipart/mixed with the
// complained-of message attached rather than as an ARF multipart/report.
const complaintSubject = "complaint about message from "

// mixedComplaint skips a Hotmail/Outlook.com complaint report: its fixed
// subject and, as its only attachment, the message complained of.
func mixedComplaint(_ Config, m *message.Message) (Verdict, bool) {
	if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(m.Subject)), complaintSubject) {
		return Verdict{}, false
	}
	if len(m.Attachments) != 1 || !attachedMessage(m.Attachments[0].Type) {
		return Verdict{}, false
	}
	return skip(triage.ReasonFeedbackReport, "Subject", m.Subject+" (with one attached message)")
}

func attachedMessage(mediaType string) bool {
	t := strings.ToLower(mediaType)
	return t == "message/rfc822" || t == "message/global"
}

// readPrefixes start the subject of Outlook's read receipts in the
// languages of its clients (lower-cased, French typography's space before
// the colon removed).
var readPrefixes = []string{
	"read:", "not read:", "gelesen:", "nicht gelesen:", "przeczytane:", "przeczytano:", "nieprzeczytane:",
	"lu:", "non lu:", "leído:", "no leído:", "letto:", "non letto:", "läst:", "gelezen:", "přečteno:",
	"luettu:", "læst:", "lest:", "lido:",
}

// tnefReceipt skips an Outlook read receipt sent as TNEF (winmail.dat)
// rather than as a disposition notification: a read-receipt subject on a
// message that carries an application/ms-tnef part or an
// X-MS-TNEF-Correlator. The subject alone is a person's ("Read: the manual
// does not help"), and so is TNEF alone (Outlook's rich text mail).
func tnefReceipt(_ Config, m *message.Message) (Verdict, bool) {
	s := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(m.Subject)), " :", ":")
	found := false
	for _, p := range readPrefixes {
		if strings.HasPrefix(s, p) {
			found = true
			break
		}
	}
	if !found {
		return Verdict{}, false
	}
	tnef := strings.TrimSpace(m.HeaderValue("X-MS-TNEF-Correlator")) != ""
	for _, a := range m.Attachments {
		if strings.EqualFold(a.Type, "application/ms-tnef") || strings.EqualFold(a.Type, "application/vnd.ms-tnef") {
			tnef = true
		}
	}
	if !tnef {
		return Verdict{}, false
	}
	return skip(triage.ReasonReadReceipt, "Subject", m.Subject+" (Outlook TNEF)")
}

// ticketHeaders are the headers help desks put on their own mail: Request
// Tracker (RT-Ticket, X-RT-Loop-Prevention, RT-Originator), OTRS/Znuny
// (X-OTRS-Loop, X-Znuny-Loop).
var ticketHeaders = []string{"Rt-Ticket", "X-Rt-Ticket", "X-Rt-Loop-Prevention", "Rt-Originator", "X-Rt-Originator", "X-Otrs-Loop", "X-Znuny-Loop"}

// rtSubject is Request Tracker's subject of its automatic mail: the
// ticket tag, then AutoReply:, Resolved: and kin.
var rtSubject = regexp.MustCompile(`(?i)^\[[^\]\s][^\]]{0,100} #[0-9]{1,12}\] (autoreply|resolved|auto-reply|ticket resolved|rejected|deleted):`)

// ticketSystem skips another help desk's notices: its headers, a
// Managed-By naming Request Tracker, or RT's automatic subjects.
func ticketSystem(_ Config, m *message.Message) (Verdict, bool) {
	for _, k := range ticketHeaders {
		if v := m.Header[k]; len(v) > 0 {
			return skip(triage.ReasonTicketSystem, k, v[0])
		}
	}
	for _, k := range []string{"Managed-By", "X-Managed-By"} {
		for _, v := range m.Header[k] {
			l := strings.ToLower(strings.TrimSpace(v))
			if strings.HasPrefix(l, "rt ") || strings.Contains(l, "request tracker") || strings.Contains(l, "bestpractical.com") {
				return skip(triage.ReasonTicketSystem, k, v)
			}
		}
	}
	if rtSubject.MatchString(strings.TrimSpace(m.Subject)) {
		return skip(triage.ReasonTicketSystem, "Subject", m.Subject)
	}
	return Verdict{}, false
}

// feedHeaderPrefixes start the headers of feed readers that put items
// into a mailbox (feed2imap, feed2imap-go, rss2email, and "X-Feed-" kin).
var feedHeaderPrefixes = []string{"X-Feed2imap-", "X-F2istatus", "X-Cacheindex", "X-Rss-", "X-Feed-"}

// feed skips a news feed's item: a feed reader's header, or the shape
// feed2imap gives its items, From the same address as the only To, on a
// message that no mail server delivered (no Received: it was put into the
// mailbox directly). A person writing to themselves with the inbox in Bcc
// went through a server.
func feed(_ Config, m *message.Message) (Verdict, bool) {
	var keys []string
	for k, v := range m.Header {
		for _, p := range feedHeaderPrefixes {
			if strings.HasPrefix(k, p) && len(v) > 0 {
				keys = append(keys, k)
			}
		}
	}
	if len(keys) > 0 {
		sort.Strings(keys)
		return skip(triage.ReasonFeed, keys[0], m.Header[keys[0]][0])
	}
	from := strings.TrimSpace(m.From.Address)
	if from == "" || len(m.To) != 1 || !strings.EqualFold(from, strings.TrimSpace(m.To[0])) {
		return Verdict{}, false
	}
	if len(m.Header["Received"]) > 0 {
		return Verdict{}, false
	}
	return skip(triage.ReasonFeed, "From", from+" (the same as To, never delivered by a mail server)")
}

// calendar skips a calendar's scheduling mail (RFC 6047): an invitation,
// update, cancellation or answer, known by its text/calendar part's
// method. A calendar file a person attaches names none.
func calendar(_ Config, m *message.Message) (Verdict, bool) {
	if m.CalendarMethod == "" {
		return Verdict{}, false
	}
	return skip(triage.ReasonCalendar, "Content-Type", "text/calendar; method="+m.CalendarMethod)
}
