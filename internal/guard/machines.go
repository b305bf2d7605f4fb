package guard

import (
	"mime"
	"strings"
	"unicode"

	"triage"
	"triage/internal/message"
)

// reportReasons maps a report type (RFC 6522 report-type, or the media
// type of the machine-readable part) to its reason.
var reportReasons = map[string]triage.Reason{
	"delivery-status":          triage.ReasonBounce,
	"feedback-report":          triage.ReasonFeedbackReport,
	"disposition-notification": triage.ReasonReadReceipt,
}

// report skips every multipart/report, and a message that carries a
// machine-readable report part (message/delivery-status,
// message/feedback-report, message/disposition-notification) anywhere in
// its tree, as a report wrapped in another multipart is still a report.
func report(_ Config, m *message.Message) (Verdict, bool) {
	for _, v := range m.Header["Content-Type"] {
		mt, params, err := mime.ParseMediaType(v)
		if err != nil || !strings.EqualFold(mt, "multipart/report") {
			continue
		}
		reason, ok := reportReasons[strings.ToLower(params["report-type"])]
		if !ok {
			reason = triage.ReasonReport
		}
		return skip(reason, "Content-Type", v)
	}
	for _, a := range m.Attachments {
		kind, ok := strings.CutPrefix(strings.ToLower(a.Type), "message/")
		if !ok {
			continue
		}
		if reason, ok := reportReasons[kind]; ok {
			return skip(reason, "Content-Type", a.Type+" part")
		}
	}
	return Verdict{}, false
}

// bounceSubjects start the subjects of bounces (lower-cased), in the
// wording of common MTAs; they only count as evidence for a message whose
// From cannot be answered anyway.
var bounceSubjects = []string{
	"undelivered mail", "undeliverable", "undeliverable mail", "delivery status notification",
	"delivery failure", "delivery has failed", "mail delivery failed", "mail delivery failure",
	"returned mail", "failure notice", "mail system error", "non remis", "unzustellbar",
	"nicht zustellbar", "niedostarczon", "niedoręczon", "nie można dostarczyć",
}

// bounceSenders name a delivery subsystem in a From's text (lower-cased,
// without separators).
var bounceSenders = []string{"mailerdaemon", "postmaster", "maildeliverysystem", "maildeliverysubsystem", "mailsystem", "maildelivery"}

// nullFrom reports whether a From header value is the null address "<>"
// (with or without a display name), which only machines send.
func nullFrom(raw string) bool {
	return strings.HasSuffix(strings.ReplaceAll(strings.TrimSpace(raw), " ", ""), "<>")
}

// bounceEvidence reports why a message with no usable From is a bounce:
// a From naming a delivery subsystem, or a bounce subject. It returns the
// header and value, or ok false.
func bounceEvidence(m *message.Message) (header, value string, ok bool) {
	from := m.HeaderValue("From")
	if systemName(from) {
		return "From", from, true
	}
	if bounceSubject(m.Subject) {
		return "Subject", m.Subject, true
	}
	return "", "", false
}

// bounceSubject reports whether subject starts like a bounce's.
func bounceSubject(subject string) bool {
	subj := strings.ToLower(strings.TrimSpace(subject))
	for _, s := range bounceSubjects {
		if strings.HasPrefix(subj, s) {
			return true
		}
	}
	return false
}

// addressedBounce reports why a message whose From has an address is a
// bounce: a From display name naming a delivery subsystem ("Mail Delivery
// Subsystem <postfix@mx>", "Mailer Daemon <root@mx>", "NDR <x@mx>"), or a
// bounce subject on a message that returns the message or its header (a
// message/rfc822 or text/rfc822-headers part). A bounce subject alone is a
// customer's as well ("Delivery failure: my blender never arrived").
func addressedBounce(m *message.Message) (header, value string, ok bool) {
	if name := m.From.Name; systemName(name) || ndrName(name) {
		return "From", m.HeaderValue("From"), true
	}
	if !bounceSubject(m.Subject) {
		return "", "", false
	}
	for _, a := range m.Attachments {
		if attachedMessage(a.Type) || strings.EqualFold(a.Type, "text/rfc822-headers") {
			return "Subject", m.Subject + " (returns a message)", true
		}
	}
	return "", "", false
}

// ndrName reports whether a display name is a non-delivery report's
// ("NDR", "NDR Service"): the word on its own, not inside a name.
func ndrName(name string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return !unicode.IsLetter(r) }) {
		if w == "ndr" {
			return true
		}
	}
	return false
}

// dropSpacing writes "Mail Delivery System" as "maildeliverysystem" (once
// lower-cased).
var dropSpacing = strings.NewReplacer("-", "", "_", "", ".", "", " ", "")

// systemName reports whether text names a delivery subsystem
// ("MAILER-DAEMON", "Mail Delivery System", "postmaster").
func systemName(text string) bool {
	compact := dropSpacing.Replace(strings.ToLower(text))
	for _, s := range bounceSenders {
		if strings.Contains(compact, s) {
			return true
		}
	}
	return false
}

// listManagerHeaders are set by list managers on their own notices (fml,
// Mailman administrivia, Ecartis, ListProc).
var listManagerHeaders = []string{"X-Mlserver", "X-Ml-Name", "X-Ml-Count", "X-List-Administrivia", "X-Mailman-Version", "X-Ecartis-Version", "X-Listprocessor-Version", "X-Listserver"}

// listManagerLocals are the local parts list managers send from.
var listManagerLocals = map[string]bool{"majordomo": true, "listserv": true, "listproc": true, "mailman": true, "sympa": true, "ecartis": true, "fml": true}

func listManager(_ Config, m *message.Message) (Verdict, bool) {
	for _, k := range listManagerHeaders {
		if v, ok := m.Header[k]; ok && len(v) > 0 {
			return skip(triage.ReasonListManager, k, v[0])
		}
	}
	local, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(m.From.Address)), "@")
	if local != "" && (strings.HasSuffix(local, "-admin") || listManagerLocals[local] || listCommand(local)) {
		return skip(triage.ReasonListManager, "From", m.From.Address)
	}
	return Verdict{}, false
}

// listCommands are the subaddresses mlmmj (and kin) send their notices
// and requests from: list+owner@, list+help@, list+confsub-<cookie>@.
var listCommands = []string{"owner", "help", "bounces-", "confsub", "confunsub", "moderate", "subscribe", "unsubscribe"}

// listCommand reports whether a local part is a list manager's command
// address (a subaddress of listCommands).
func listCommand(local string) bool {
	_, sub, ok := strings.Cut(local, "+")
	if !ok {
		return false
	}
	for _, c := range listCommands {
		if strings.HasSuffix(c, "-") && strings.HasPrefix(sub, c) || sub == c || strings.HasPrefix(sub, c+"-") {
			return true
		}
	}
	return false
}

// challengePhrases are what challenge/response filters ask of a sender
// (lower-cased): prove that you are a person. They only count when the
// Return-Path differs from the From (the filter's envelope, not the
// person's).
var challengePhrases = []string{
	// English
	"confirm you are human", "confirm that you are human", "confirm you are a human",
	"confirm that you are a human", "prove you are human", "prove that you are human",
	"you are a real person", "you are not a robot", "you are not a spammer",
	"approved senders list", "my approved senders", "sender verification",
	// Polish
	"jesteś człowiekiem", "nie jesteś robotem", "weryfikacja nadawcy",
	// German
	"dass sie ein mensch sind", "kein roboter sind", "absenderverifizierung",
}

// challengeHeaders mark challenges by known challenge/response systems:
// Bluebottle, TMDA, ASK.
var challengeHeaders = map[string]string{"X-Bluebottle-Request": "", "X-Delivery-Agent": "tmda", "X-Askversion": ""}

func challenge(_ Config, m *message.Message) (Verdict, bool) {
	for k, prefix := range challengeHeaders {
		for _, v := range m.Header[k] {
			if strings.HasPrefix(strings.ToLower(strings.TrimSpace(v)), prefix) {
				return skip(triage.ReasonChallenge, k, v)
			}
		}
	}
	rp := returnPathAddress(m.HeaderValue("Return-Path"))
	if rp == "" || strings.EqualFold(rp, strings.TrimSpace(m.From.Address)) {
		return Verdict{}, false
	}
	text := strings.ToLower(strings.Join(strings.Fields(m.Subject+" "+m.Text), " "))
	for _, p := range challengePhrases {
		if strings.Contains(text, p) {
			return skip(triage.ReasonChallenge, "Return-Path", m.HeaderValue("Return-Path")+" (From "+m.From.Address+`; asks "`+p+`")`)
		}
	}
	return Verdict{}, false
}

// returnPathAddress is the address of a Return-Path value, without angle
// brackets ("" for the null path).
func returnPathAddress(v string) string {
	v = strings.TrimSpace(v)
	v = strings.TrimSuffix(strings.TrimPrefix(v, "<"), ">")
	return strings.TrimSpace(v)
}
