package instructions

import (
	"maps"
	"slices"
	"strings"
)

// PrefetchFroms are the argument sources the pipeline can fill before the
// model runs: the sender, the reply address and the serials found in the
// message. A serial the model reads from an attachment cannot be known
// before it reads it: from: serials_or_attachments is filled from the
// message's serials only.
var PrefetchFroms = []string{FromSender, FromReplyTo, FromSerials, FromSerialsOrAttachments}

// SerialFrom reports whether an argument of this source holds a serial.
func SerialFrom(from string) bool {
	return from == FromSerials || from == FromSerialsOrAttachments
}

// validatePrefetch checks a binding marked prefetch: true: a read-only
// look-up (parallel, not an effect nor final) whose every argument has a
// source the pipeline can fill, at most one of them a serial (one call per
// serial found).
func (t *Tool) validatePrefetch(fail func(string, ...any)) {
	if t.Effect || t.Final {
		fail("an effect or the final tool changes the world: only a read-only look-up may run before the model asks for it; remove prefetch: true")
	} else if !t.Parallel {
		fail("only a read-only look-up declared parallel: true may run before the model asks for it; set parallel: true, or remove prefetch")
	}
	serials := 0
	for _, a := range slices.Sorted(maps.Keys(t.Args)) {
		p := t.Args[a]
		if p == nil {
			continue // reported as an empty policy
		}
		if !slices.Contains(PrefetchFroms, p.From) {
			from := "no from"
			if p.From != "" {
				from = "from: " + p.From
			}
			fail("argument %s has %s, which the pipeline cannot fill before the model runs (prefetch needs every argument from one of %s)",
				a, from, strings.Join(PrefetchFroms, ", "))
		}
		if SerialFrom(p.From) {
			serials++
		}
	}
	if serials > 1 {
		fail("%d arguments take a serial: a prefetched look-up runs once per serial found, so it may take at most one", serials)
	}
}
