package e2e

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
	"triage/internal/watch"
)

// TestDraftCrashConsistency is TestCrashConsistency in draft mode: the real
// binary is SIGKILLed at random moments while it drafts replies, and
// restarted, with new mail before every start; at the end every message has exactly one draft in the Drafts
// folder (or was handed to a person, with none), and nothing went out over
// SMTP.
func TestDraftCrashConsistency(t *testing.T) {
	draftCrashConsistency(t, newWorld(t, "reply_mode: draft\n"))
}

func TestDovecotDraftCrashConsistency(t *testing.T) {
	tgt, _ := dovecotTarget(t)
	draftCrashConsistency(t, newWorldFor(t, tgt, "reply_mode: draft\n"))
}

func draftCrashConsistency(t *testing.T, w *world) {
	const wantKills, maxLifetime = 25, 400 * time.Millisecond
	rng, seed := crashRand(t, "draft crash test")
	var msgs []inbound
	for i := range 10 {
		msgs = append(msgs, w.deliver(i))
	}
	for kills := 0; kills < wantKills; {
		for range 2 { // new mail before every start, so that kills land mid-work
			msgs = append(msgs, w.deliver(len(msgs)))
		}
		if killed, err := w.runKilled(rng, maxLifetime); !killed {
			t.Fatalf("run ended before the kill (%v):\n%s", err, tail(w.logs(), 3000))
		}
		kills++
	}
	w.finalOnce()
	drafts := map[string]int{}
	for _, m := range w.folder(watch.DefaultDraftsFolder) {
		drafts[headerOf(m.Raw, "In-Reply-To")]++
	}
	inHuman := w.handedToPerson()
	var problems []string
	drafted, human := 0, 0
	for _, m := range msgs {
		switch n := drafts[m.ID]; {
		case n == 1 && !inHuman[m.ID]:
			drafted++
		case n == 0 && inHuman[m.ID]:
			human++
		default:
			problems = append(problems, fmt.Sprintf("%s: %d drafts, handed to a person %v", m.ID, n, inHuman[m.ID]))
		}
	}
	logs := w.logs()
	t.Logf("draft crash consistency: kills=%d messages=%d drafted_once=%d handed_to_person=%d problems=%d smtp=%d; drafts recovered after a kill: %d found stored, %d stored late, %d messages settled from a stored draft (seed %d)",
		wantKills, len(msgs), drafted, human, len(problems), len(w.sink.Messages()),
		strings.Count(logs, "pending draft found in the Drafts folder"), strings.Count(logs, "pending draft not in the Drafts folder"), strings.Count(logs, `"reason":"recovered"`), seed)
	if len(problems) > 0 {
		sort.Strings(problems)
		t.Errorf("not exactly one draft each: %v", problems)
	}
	if n := len(w.sink.Messages()); n != 0 {
		t.Errorf("%d messages went out over SMTP in draft mode", n)
	}
	if drafted == 0 {
		t.Errorf("nothing was drafted; logs:\n%s", tail(w.logs(), 3000))
	}
}
