package dispatcher

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"triage/internal/clip"
	"triage/internal/instructions"
	"triage/internal/serial"
)

// checkArg applies one argument's policy to its value. It returns the value
// the tool receives: for a from policy, the text the policy vouched for (the
// bare address, the serial as the message wrote it, the message's own
// words), never the model's spelling of it, so that case folding, Unicode
// lookalikes, punctuation or line breaks the comparison ignores cannot reach
// the tool.
func (s *Session) checkArg(name string, p *instructions.Arg, v any) (any, error) {
	err := s.checkValue(name, p, v)
	if err != nil || p.From == "" {
		return v, err
	}
	str := v.(string) // checkValue refused anything else
	vouched := str
	switch p.From {
	case instructions.FromSender, instructions.FromReplyTo, instructions.FromStaff:
		vouched, _ = BareAddress(str)
	case instructions.FromSerials:
		vouched = s.index().serials[serial.Normalize(str)]
	case instructions.FromSerialsOrAttachments:
		if sn := s.index().serials[serial.Normalize(str)]; sn != "" {
			vouched = sn
		} else {
			vouched, s.fromAtt = s.readSerial(str), true
		}
	case instructions.FromMessage:
		vouched, _ = s.index().inMessage(str)
	}
	// enum, pattern and max_length hold for what the tool receives too: the
	// model's "ORD-77" matches [A-Z]+-[0-9]+, the customer's "ord-77" not.
	if vouched != str {
		if err := s.checkValue(name, &instructions.Arg{Enum: p.Enum, MaxLength: p.MaxLength, Pattern: p.Pattern, Regexp: p.Regexp}, vouched); err != nil {
			return v, err
		}
	}
	return vouched, nil
}

// checkValue applies one argument's policy to the model's value.
func (s *Session) checkValue(name string, p *instructions.Arg, v any) error {
	str, isString := v.(string)
	if p.Enum != nil {
		if !isString || !slices.Contains(p.Enum, str) {
			return refuse(CodeInvalidArgs, "%s must be one of %s", name, strings.Join(p.Enum, ", "))
		}
	}
	if p.MaxLength > 0 {
		if !isString {
			return refuse(CodeInvalidArgs, "%s must be a string", name)
		}
		if n := utf8.RuneCountInString(str); n > p.MaxLength {
			return refuse(CodeInvalidArgs, "%s is %d characters long, the limit is %d", name, n, p.MaxLength)
		}
	}
	if p.Regexp != nil {
		if !isString || !p.Regexp.MatchString(str) {
			return refuse(CodeInvalidArgs, "%s does not match the pattern %s", name, p.Pattern)
		}
	}
	if p.From == "" {
		return nil
	}
	if !isString || strings.TrimSpace(str) == "" {
		return refuse(CodeInvalidArgs, "%s must be a non-empty string", name)
	}
	switch p.From {
	case instructions.FromSender, instructions.FromReplyTo, instructions.FromStaff:
		return s.checkAddress(name, p.From, str)
	case instructions.FromSerials:
		if !s.index().serial(str) {
			return refuse(CodeSerialNotInMessage, "%s %q is not a serial number found in the customer's message", name, excerpt(str))
		}
	case instructions.FromSerialsOrAttachments:
		if s.index().serial(str) {
			return nil
		}
		if s.seen == 0 {
			return refuse(CodeSerialNotInMessage, "%s %q is not a serial number found in the customer's message, and you were sent no attachment", name, excerpt(str))
		}
		if s.readSerial(str) == "" {
			return refuse(CodeSerialNotInMessage, "%s %q is not a serial number found in the customer's message, nor one whole serial number as read from an attachment", name, excerpt(str))
		}
	case instructions.FromMessage:
		if _, ok := s.index().inMessage(str); !ok {
			return refuse(CodeNotInMessage, "%s %q does not occur as whole words in the customer's subject or message", name, excerpt(str))
		}
	default:
		return refuse(CodeInternal, "%s: unknown from %q", name, p.From)
	}
	return nil
}

// checkAddress accepts exactly one address equal to the one from names.
func (s *Session) checkAddress(name, from, v string) error {
	code := CodeRecipientNotAllowed
	if from == instructions.FromSender {
		code = CodeSenderMismatch
	}
	addr, err := BareAddress(v) // a list ("a@x, b@y") is refused here
	if err != nil {
		return refuse(code, "%s must be exactly one address; %q is not: %v", name, excerpt(v), err)
	}
	switch from {
	case instructions.FromSender:
		if !sameAddress(addr, s.msg.From.Address) {
			return refuse(code, "%s must be the sender of the message (its From address)", name)
		}
	case instructions.FromReplyTo:
		// The reply address, not the Reply-To as written: a Reply-To
		// outside the From domain counts only for an authenticated
		// message (Dispatcher.ReplyAddress), or anyone could have triage
		// mail anyone.
		if !sameAddress(addr, s.replyTo) {
			if !sameAddress(addr, s.msg.From.Address) && sameAddress(addr, s.msg.ReplyTo) {
				return refuse(code, "%s must be the customer's reply address, %s: the message's Reply-To %s is outside the sender's domain and the message is not authenticated, so it is never answered", name, s.replyTo, s.msg.ReplyTo)
			}
			return refuse(code, "%s must be the customer's reply address", name)
		}
		// A customer reply never goes to staff, even when a stranger's
		// email names a staff address in Reply-To: our own support
		// address would be mailing staff words a stranger chose.
		if s.d.staff[addr] {
			return refuse(code, "%s is a staff address: a customer reply never goes to staff; this email is left for a person", name)
		}
	case instructions.FromStaff:
		if !s.d.staff[addr] {
			return refuse(code, "%s must be a configured staff address", name)
		}
	}
	return nil
}

// checkRequirement looks for an earlier successful call, in an earlier
// turn, that satisfies r.
func (s *Session) checkRequirement(t *instructions.Tool, r instructions.Requirement, args map[string]any) error {
	if r.IfDeclared && (s.sc == nil || s.sc.Function(r.Call) == nil) {
		return nil
	}
	sameTurn := false
	for _, c := range s.done {
		if c.name != r.Call || !subset(r.Result, c.result.Value) || !oneOf(r.ResultOneOf, c.result.Value) || !s.same(t, r.Same, args, c.args) {
			continue
		}
		if c.turn < s.turn {
			return nil
		}
		sameTurn = true
	}
	want := r.Call + " succeeded"
	if len(r.Result) > 0 {
		b, _ := json.Marshal(r.Result)
		want += " with a result matching " + string(b)
	}
	if len(r.ResultOneOf) > 0 {
		alts := make([]string, len(r.ResultOneOf))
		for i, a := range r.ResultOneOf {
			b, _ := json.Marshal(a)
			alts[i] = string(b)
		}
		if len(r.Result) > 0 {
			want += " and"
		}
		want += " with a result matching one of " + strings.Join(alts, ", ")
	}
	if len(r.Same) > 0 {
		want += " for the same " + strings.Join(r.Same, ", ")
	}
	if sameTurn {
		return refuse(CodeRequirementNotMet, "%s needs %s in an earlier turn: read that result first, then call %s", t.Name, want, t.Name)
	}
	return refuse(CodeRequirementNotMet, "%s is allowed only after %s", t.Name, want)
}

// same reports whether the named arguments are equal in both calls, normalized
// the way the binding's from policy reads them.
func (s *Session) same(t *instructions.Tool, names []string, a, b map[string]any) bool {
	for _, n := range names {
		va, oka := a[n]
		vb, okb := b[n]
		if !oka || !okb {
			return false
		}
		from := ""
		if p := t.Args[n]; p != nil {
			from = p.From
		}
		if normalize(from, va) != normalize(from, vb) {
			return false
		}
	}
	return true
}

func normalize(from string, v any) string {
	str, ok := v.(string)
	if !ok {
		return canonical(v)
	}
	switch from {
	case instructions.FromSerials, instructions.FromSerialsOrAttachments:
		return serial.Normalize(str)
	case instructions.FromSender, instructions.FromReplyTo, instructions.FromStaff:
		if addr, err := BareAddress(str); err == nil {
			return addr
		}
	}
	return strings.ToLower(strings.TrimSpace(str))
}

// subset reports whether every key of want has an equal value in got
// (maps recursively).
// oneOf reports whether one of alts is a subset of got (true when there
// are no alternatives).
func oneOf(alts []map[string]any, got map[string]any) bool {
	if len(alts) == 0 {
		return true
	}
	for _, a := range alts {
		if subset(a, got) {
			return true
		}
	}
	return false
}

func subset(want, got map[string]any) bool {
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			return false
		}
		wm, wIsMap := w.(map[string]any)
		gm, gIsMap := g.(map[string]any)
		switch {
		case wIsMap && gIsMap:
			if !subset(wm, gm) {
				return false
			}
		case !reflect.DeepEqual(jsonish(w), jsonish(g)):
			return false
		}
	}
	return true
}

// jsonish converts v to what decoding its JSON gives (numbers float64).
func jsonish(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

// canonical is v as JSON with sorted keys, for comparing calls.
func canonical(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// msgIndex is the inbound message as from: serials and from: message
// compare against it: its serials and its tokens.
type msgIndex struct {
	ext      *serial.Extractor
	serials  map[string]string // normalized serial -> as the message wrote it
	found    []string          // the extracted serials, in the message's order, each once
	all      []string          // tokens of subject, text and quoted text
	message  [][]string        // tokens of the subject and of the new text
	folded   [][]string        // the same, folded
	checkTok map[string]bool   // tokens already tried as serials
}

// index builds the message's index on first use.
func (s *Session) index() *msgIndex {
	if s.indexed != nil {
		return s.indexed
	}
	m := s.msg
	f := &msgIndex{ext: s.d.ext, serials: map[string]string{}, checkTok: map[string]bool{}}
	for _, sn := range s.d.ext.Extract(m.Subject+"\n"+m.Text, m.Quoted) {
		if n := serial.Normalize(sn); f.serials[n] == "" {
			f.serials[n] = sn
			f.found = append(f.found, sn)
		}
	}
	f.all = tokens(m.Subject + "\n" + m.Text + "\n" + m.Quoted)
	for _, part := range []string{m.Subject, m.Text} {
		toks := tokens(part)
		f.message = append(f.message, toks)
		f.folded = append(f.folded, fold(toks))
	}
	s.indexed = f
	return f
}

// readSerial returns v as the serial patterns read it when v is one whole
// serial number and nothing else ("" otherwise): what a model read from a
// photo must at least look like a serial.
func (s *Session) readSerial(v string) string {
	v = strings.TrimSpace(v)
	found := s.d.ext.Extract(v, "")
	if len(found) != 1 || serial.Normalize(found[0]) != serial.Normalize(v) {
		return ""
	}
	return found[0]
}

// serial accepts v when it is one of the extracted serials, or when it is a
// whole token of the message that is a serial number by itself; never a
// substring of a longer token.
func (f *msgIndex) serial(v string) bool {
	n := serial.Normalize(v)
	if n == "" {
		return false
	}
	if f.serials[n] != "" {
		return true
	}
	for _, tok := range f.all {
		if serial.Normalize(tok) != n || f.checkTok[tok] {
			continue
		}
		f.checkTok[tok] = true
		for _, sn := range f.ext.Extract(tok, "") {
			if serial.Normalize(sn) == n {
				f.serials[n] = sn
				return true
			}
		}
	}
	return false
}

// inMessage accepts v when its words are whole consecutive tokens of the
// subject or of the new text (case-insensitive); it returns those tokens as
// the message wrote them, joined by single spaces.
func (f *msgIndex) inMessage(v string) (string, bool) {
	want := fold(tokens(v))
	if len(want) == 0 {
		return "", false
	}
	for p, toks := range f.folded {
		for i := 0; i+len(want) <= len(toks); i++ {
			if slices.Equal(toks[i:i+len(want)], want) {
				return strings.Join(f.message[p][i:i+len(want)], " "), true
			}
		}
	}
	return "", false
}

// tokens splits s at white space and trims the punctuation around each
// piece: "(SN-48213-PL)," is the token "SN-48213-PL".
func tokens(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, unicode.IsSpace) {
		f = strings.TrimFunc(f, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSymbol(r) })
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

func fold(toks []string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = strings.ToLower(t)
	}
	return out
}

// capResult returns res as it may go back to the model: unchanged when its
// JSON fits in max bytes, else with its longest strings cut, or (when that
// is not enough) a truncated JSON preview.
func capResult(res map[string]any, max int) (map[string]any, bool) {
	b, err := json.Marshal(res)
	if err != nil || len(b) <= max {
		return res, false
	}
	var out map[string]any // res as decoding its JSON gives it, to cut in place
	if json.Unmarshal(b, &out) != nil {
		out = res
	}
	for range 32 {
		size := len(canonical(out))
		if size <= max {
			return out, true
		}
		if !cutLongest(out, size-max+64) {
			break
		}
	}
	// Too many small values: a preview of the JSON text, shrunk until its
	// own encoding (escapes included) fits.
	for n := max; n > 0; {
		m := map[string]any{"truncated": true, "original_bytes": len(b), "preview": clip.Bytes(string(b), n, "")}
		size := len(canonical(m))
		if size <= max {
			return m, true
		}
		n -= size - max + 16
	}
	return map[string]any{"truncated": true, "original_bytes": len(b)}, true
}

// cutLongest shortens the longest string in v by about over bytes; it
// reports false when there is no string worth cutting.
func cutLongest(v any, over int) bool {
	var best *string
	var walk func(any)
	var bestSet func(string)
	// visit considers e (found where set writes) or walks into it.
	visit := func(e any, set func(string)) {
		str, ok := e.(string)
		if !ok {
			walk(e)
			return
		}
		if best == nil || len(str) > len(*best) {
			best, bestSet = &str, set
		}
	}
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				visit(e, func(n string) { x[k] = n })
			}
		case []any:
			for i, e := range x {
				visit(e, func(n string) { x[i] = n })
			}
		}
	}
	walk(v)
	if best == nil || len(*best) < 64 {
		return false
	}
	keep := len(*best) - over - len(truncMark)
	if keep < 0 {
		keep = 0
	}
	bestSet(clip.Bytes(*best, keep, "") + truncMark)
	return true
}

const truncMark = " [... truncated ...]"
