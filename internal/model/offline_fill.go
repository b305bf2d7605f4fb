// The arguments of a call, filled from the facts and the results so far.

package model

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"google.golang.org/genai"

	"triage/internal/prompt"
)

// declarations lists the callable declarations in order, honouring
// toolConfig (mode NONE disables calls; allowedFunctionNames narrows them).
func declarations(req *geminiRequest) []*genai.FunctionDeclaration {
	allowed := declared(req)
	var out []*genai.FunctionDeclaration
	for _, t := range req.Tools {
		if t == nil {
			continue
		}
		for _, fd := range t.FunctionDeclarations {
			if fd != nil && allowed[fd.Name] {
				out = append(out, fd)
			}
		}
	}
	return out
}

// replyFunction is the declared function with both a to and a body
// parameter: the reply.
func replyFunction(decls []*genai.FunctionDeclaration) *genai.FunctionDeclaration {
	for _, d := range decls {
		if takes(d, "to") && takes(d, "body") {
			return d
		}
	}
	return nil
}

// schema returns a declaration's parameters as JSON values.
func schema(d *genai.FunctionDeclaration) (props map[string]any, required []string) {
	var root map[string]any
	switch p := d.ParametersJsonSchema.(type) {
	case map[string]any:
		root = p
	default:
		if p != nil {
			b, _ := json.Marshal(p)
			_ = json.Unmarshal(b, &root)
		}
	}
	if root == nil && d.Parameters != nil {
		b, _ := json.Marshal(d.Parameters)
		_ = json.Unmarshal(b, &root)
		// genai.Schema encodes property names the same way.
	}
	props, _ = root["properties"].(map[string]any)
	if rs, ok := root["required"].([]any); ok {
		for _, r := range rs {
			if s, ok := r.(string); ok {
				required = append(required, s)
			}
		}
	}
	return props, required
}

func takes(d *genai.FunctionDeclaration, param string) bool {
	props, _ := schema(d)
	_, ok := props[param]
	return ok
}

// fill builds the arguments of d by parameter name from the facts:
// serial_number <- serial, to <- reply_to, customer_email/email/from <- from,
// subject <- "Re: "+subject, an enum <- "normal" when offered (else its first
// value), and any other required string <- keyword (a word of the customer's
// subject or new text). Optional parameters are filled only from the facts.
// It reports false when a required parameter cannot be filled.
func fill(d *genai.FunctionDeclaration, f prompt.Facts, serialNumber, keyword string) (map[string]any, bool) {
	props, required := schema(d)
	isRequired := map[string]bool{}
	for _, r := range required {
		isRequired[r] = true
	}
	args := map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(props)) {
		p, _ := props[name].(map[string]any)
		var v string
		switch name {
		case "serial_number":
			v = serialNumber
		case "to":
			v = f.ReplyTo
		case "customer_email", "email", "from", "sender":
			v = f.From
		case "subject":
			v = replySubject(f.Subject)
		case "body":
			// The reply's body is written by composeBody; anything else
			// (a note to staff) gets a short note.
			v = "The offline stand-in model handled this email and a person should review it. Subject: " + f.Subject
		default:
			if !isRequired[name] {
				continue
			}
			if enum, _ := p["enum"].([]any); len(enum) > 0 {
				v = fmt.Sprint(enum[0])
				for _, e := range enum {
					if e == "normal" {
						v = "normal"
					}
				}
			} else if t, _ := p["type"].(string); t == "string" || t == "" {
				v = keyword
			}
		}
		if v == "" {
			if isRequired[name] {
				return nil, false
			}
			continue
		}
		args[name] = v
	}
	return args, true
}

// positive reports whether every earlier successful result for sn has no
// negative status (only "valid", no status at all, or a decision on the
// seller's statutory liability counts as positive), and there was at least
// one.
func positive(h *history, sn string) bool {
	seen := false
	for _, o := range h.results {
		if o.dryRun() || o.args["serial_number"] != sn && o.str("serial_number") != sn {
			continue // a dry run's stand-in says nothing about the serial
		}
		if !o.ok {
			return false
		}
		if st := o.str("status"); st != "" && st != "valid" && o.basis() != "statutory" {
			return false // an expired guarantee the law still covers is positive
		}
		seen = true
	}
	return seen
}

// stopwords are frequent words that say nothing about what is asked.
var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`about after again also because been before being could dear does doing from have having hello here into just more most much need only other over please same should some such than that their them then there these they this those thank thanks very what when where which while will with would your yours
		dzien dobry witam prosze bardzo dziekuje pozdrawiam jest jestem mam moje moja moj mnie oraz przez tego tylko jednak kiedy ktory ktora ktore jakie jak czy gdzie sobie bedzie byla bylo teraz juz wiec albo ale mozna mozecie panstwo panstwa pytanie pytaniem sprawie odpowiedz`) {
		stopwords[w] = true
	}
}

// significantWord picks the longest word of at least four letters from the
// subject (else the new text) that is not a common word; "" when none.
func significantWord(subject, text string) string {
	for _, s := range []string{replySubject(subject)[len("Re: "):], text} {
		best := ""
		for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if len([]rune(w)) < 4 || stopwords[polishFold.Replace(strings.ToLower(w))] {
				continue
			}
			if len([]rune(w)) > len([]rune(best)) {
				best = w
			}
		}
		if best != "" && best != "zapytanie" {
			return best
		}
	}
	return ""
}

// firstUserText is the first user text part (the prompt with the facts).
func firstUserText(contents []*genai.Content) string {
	_, text, _ := findFacts(contents)
	return text
}

// replySubject prefixes "Re: " once; an empty subject becomes "Re: zapytanie".
func replySubject(s string) string {
	s = strings.TrimSpace(s)
	for {
		lower := strings.ToLower(s)
		if strings.HasPrefix(lower, "re:") {
			s = strings.TrimSpace(s[3:])
			continue
		}
		break
	}
	if s == "" {
		return "Re: zapytanie"
	}
	return "Re: " + s
}
