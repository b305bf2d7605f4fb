package replies_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
	"triage/internal/replies"

	"triage"
	"triage/internal/testkit/pgtest"
)

// Staff notices have their own bounds, per customer and per hour, and
// never count against the reply limits, whichever address they go to; nor
// do replies count against them.
func TestNoticeLimits(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
		l := openAt(t, target, &now)
		lim := replies.Limits{PerAddress: 5, PerHour: 100, Notices: triage.NoticeLimits{PerCustomer: 2, PerHour: 8}}
		n := 0
		notice := func(customer string) error {
			n++
			return l.PutPendingWithin(ctx, replies.Reply{Key: triage.Key(fmt.Sprintf("n%d|staff|boss@example.com", n)), MessageID: fmt.Sprintf("<n%d@x>", n),
				Kind: replies.KindNotice, InboundFrom: customer, To: "boss@example.com", Raw: []byte("raw")}, lim)
		}
		reason := func(err error) triage.Reason {
			var le *replies.LimitError
			if errors.As(err, &le) {
				return le.Reason
			}
			return ""
		}
		// Six customers: all six notices go to the one staff address,
		// past the reply limit of five per address.
		for i := range 6 {
			if err := notice(fmt.Sprintf("c%d@example.com", i)); err != nil {
				t.Fatalf("notice %d: %v", i, err)
			}
		}
		// One customer's flood: two, then refused.
		for i := range 3 {
			err := notice("Flood@Stranger.example")
			if want := triage.Reason(""); i == 2 {
				want = triage.ReasonNoticeLimit
				if got := reason(err); got != want {
					t.Fatalf("the flood's notice %d: err = %v, want %s", i, err, want)
				}
			} else if err != nil {
				t.Fatalf("the flood's notice %d: %v", i, err)
			}
		}
		// The hour's cap: eight notices in all.
		if got := reason(notice("late@example.com")); got != triage.ReasonNoticeGlobalLimit {
			t.Errorf("the ninth notice of the hour: %v, want %s", got, triage.ReasonNoticeGlobalLimit)
		}
		if got, err := l.NoticesSince(ctx, "flood@stranger.example", now.Add(-time.Hour)); err != nil || got != 2 {
			t.Errorf("NoticesSince(flood) = %d, %v; want 2", got, err)
		}
		// No notice counts as a reply: not against the staff address, not
		// against a customer, not against the hour's replies.
		for _, a := range []string{"boss@example.com", "flood@stranger.example", ""} {
			if got, err := l.RepliesSince(ctx, a, now.Add(-time.Hour)); err != nil || got != 0 {
				t.Errorf("RepliesSince(%q) = %d, %v; want 0", a, got, err)
			}
		}
		if le, err := l.Exceeded(ctx, lim, "flood@stranger.example", "boss@example.com", now); err != nil || le != nil {
			t.Errorf("a reply after the notices: %v, %v; want none", le, err)
		}
		// The hour passes: the bounds start again.
		now = now.Add(61 * time.Minute)
		if err := notice("flood@stranger.example"); err != nil {
			t.Errorf("an hour later: %v", err)
		}
	})
}
