// What the history keeps of a refused call's arguments.

package agent

import (
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"

	"google.golang.org/genai"
)

// Bounds on the arguments of a refused call as the history keeps them
// (cutArgs): the model sees how its call began and the error saying what
// was wrong, enough to correct it; a model that sends megabytes on every
// turn is not sent them back on every later turn.
const (
	// MaxRefusedArgBytes bounds the text a refused call's arguments keep
	// in all.
	MaxRefusedArgBytes = 32 << 10
	// maxArgText bounds one string value: a reply body within the
	// dispatcher's limit (20,000 bytes) is kept whole.
	maxArgText = 24 << 10
	// maxArgItems bounds the keys of one object and the items of one
	// array.
	maxArgItems = 32
	// maxArgDepth bounds the nesting kept.
	maxArgDepth = 4
)

// cutMark ends a value the history cut.
const cutMark = "[... cut: %d bytes more]"

// keepRefused replaces, in content (a model turn already in the history),
// the arguments of each call that failed by a bounded copy (CutArgs).
// failed holds the failed calls. The part keeps everything else (its
// thought signature), and content is changed in place: it is the
// history's own copy.
func keepRefused(content *genai.Content, failed map[*genai.FunctionCall]bool) {
	for i, p := range content.Parts {
		if p == nil || p.FunctionCall == nil || !failed[p.FunctionCall] {
			continue
		}
		args, cut := CutArgs(p.FunctionCall.Args)
		if !cut {
			continue
		}
		fc := *p.FunctionCall
		fc.Args = args
		np := *p
		np.FunctionCall = &fc
		content.Parts[i] = &np
	}
}

// CutArgs returns args bounded by MaxRefusedArgBytes (each string value,
// object and array, and the nesting, bounded too; what is cut is marked),
// and whether anything was cut; args itself when nothing was. args is
// never changed.
func CutArgs(args map[string]any) (map[string]any, bool) {
	c := cutter{budget: MaxRefusedArgBytes}
	out, _ := c.value(args, 0).(map[string]any)
	if !c.cut {
		return args, false
	}
	return out, true
}

type cutter struct {
	budget int
	cut    bool
}

func (c *cutter) value(v any, depth int) any {
	switch x := v.(type) {
	case string:
		return c.text(x)
	case map[string]any:
		if depth >= maxArgDepth {
			c.cut = true
			return fmt.Sprintf(cutMark, len(x))
		}
		out := make(map[string]any, min(len(x), maxArgItems))
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i >= maxArgItems || c.budget <= 0 {
				c.cut = true
				out["..."] = fmt.Sprintf("[... cut: %d more keys]", len(x)-i)
				break
			}
			out[c.text(k)] = c.value(x[k], depth+1)
		}
		return out
	case []any:
		if depth >= maxArgDepth {
			c.cut = true
			return fmt.Sprintf(cutMark, len(x))
		}
		out := make([]any, 0, min(len(x), maxArgItems))
		for i, item := range x {
			if i >= maxArgItems || c.budget <= 0 {
				c.cut = true
				out = append(out, fmt.Sprintf("[... cut: %d more items]", len(x)-i))
				break
			}
			out = append(out, c.value(item, depth+1))
		}
		return out
	default: // numbers, booleans, null: small
		c.budget -= 8
		return v
	}
}

// text is s cut to what is left of the budget and maxArgText, on a rune
// boundary, marked.
func (c *cutter) text(s string) string {
	n := min(len(s), maxArgText, max(c.budget, 0))
	c.budget -= n
	if n == len(s) {
		return s
	}
	c.cut = true
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf(cutMark, len(s)-n)
}
