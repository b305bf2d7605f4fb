package ledger

import (
	"context"
	"errors"
	"testing"
	"time"

	"triage"
	"triage/internal/testkit/pgtest"
)

// A message closed, reopened and closed again within one millisecond has
// the standing of its latest decision; a rejection does not close; bad
// resolutions are refused naming what is wrong.
func TestResolutions(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
		l := openAt(t, target, &now)
		a, b, c := triage.Key("msgid:<a@x>|a@x"), triage.Key("msgid:<b@x>|b@x"), triage.Key("msgid:<c@x>|c@x")
		for _, r := range []Resolution{
			{Key: a, Action: ActionDismissed, Reason: CloseSpam, Person: "Lena"},
			{Key: a, Action: ActionReopened, Person: "Max"},
			{Key: a, Action: ActionResolved, Reason: CloseAnsweredElsewhere, Person: "Max", Note: "called her"},
			{Key: b, Action: ActionResolved, Reason: CloseDuplicate, Person: "Lena"},
			{Key: b, Action: ActionReopened, Person: "Lena"},
			{Key: c, Action: ActionRejected, Reason: RejectWrongFacts, Person: "Lena"},
		} {
			if err := l.Resolve(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		st, err := l.Standing(ctx, []triage.Key{a, b, c, "msgid:<none>|n@x"})
		if err != nil {
			t.Fatal(err)
		}
		if len(st) != 1 || st[a].Action != ActionResolved || st[a].Reason != CloseAnsweredElsewhere || st[a].Person != "Max" || st[a].Note != "called her" || !st[a].At.Equal(now) {
			t.Errorf("standing %+v, want only a, resolved by Max (answered elsewhere)", st)
		}
		hist, err := l.Resolutions(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		if len(hist) != 3 || hist[0].Action != ActionDismissed || hist[1].Action != ActionReopened || hist[2].Action != ActionResolved {
			t.Errorf("history of a %+v, want dismissed, reopened, resolved", hist)
		}
		for _, bad := range []Resolution{
			{Key: a, Action: ActionResolved, Reason: RejectWrongTone, Person: "Lena"},
			{Key: a, Action: ActionRejected, Reason: CloseSpam, Person: "Lena"},
			{Key: a, Action: ActionReopened, Reason: CloseSpam, Person: "Lena"},
			{Key: a, Action: ActionResolved, Reason: CloseSpam},
			{Key: a, Action: "deleted", Reason: CloseSpam, Person: "Lena"},
		} {
			if err := l.Resolve(ctx, bad); !errors.Is(err, ErrBadResolution) {
				t.Errorf("Resolve(%+v) = %v, want ErrBadResolution", bad, err)
			}
		}
	})
}
