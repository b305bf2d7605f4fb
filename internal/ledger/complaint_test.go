package ledger

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/testkit/pgtest"
)

// clockAt records a message of ticket handled at *now under c.
func clockAt(t *testing.T, l *Ledger, uid uint32, ticket string, c Clock) Loc {
	t.Helper()
	loc := Loc{Account: "acct", Mailbox: "INBOX", UIDValidity: 1, UID: uid}
	e := Entry{Loc: loc, Key: triage.Key("k" + string(rune('0'+uid))), State: StateReplied, Scenario: "missing-info", Ticket: ticket, Clock: c}
	if err := l.Record(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	return loc
}

func dueUIDs(t *testing.T, l *Ledger) []uint32 {
	t.Helper()
	es, err := l.Due(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []uint32
	for _, e := range es {
		out = append(out, e.UID)
	}
	return out
}

// A follow-up that adds the missing serial joins the clock of the
// conversation's first complaint: the deadline stays the first receipt's;
// answering the follow-up on its merits stops the conversation's clock.
func TestComplaintClockFollowUpKeepsDeadline(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		day := 24 * time.Hour
		received := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		now := received.Add(time.Minute)
		l := openAt(t, target, &now)

		// Day 0: a claim without its serial; the reply asks for it (not
		// on its merits: a draft here).
		first := clockAt(t, l, 1, "T-1", Clock{Complaint: true, Received: received, Period: 14 * day})
		// An unrelated complaint with its own clock, due later.
		clockAt(t, l, 2, "T-2", Clock{Complaint: true, Received: received.Add(day), Period: 14 * day})
		// Not a complaint and no running clock: nothing.
		clockAt(t, l, 3, "T-3", Clock{Received: received})

		// Day 5: the customer sends the serial in the same conversation.
		now = received.Add(5 * day)
		follow := clockAt(t, l, 4, "T-1", Clock{Complaint: true, Received: now, Period: 14 * day})
		e, err := l.Get(ctx, follow)
		if err != nil {
			t.Fatal(err)
		}
		want := &Complaint{Received: now, AnswerBy: received.Add(14 * day), Joined: true}
		if diff := cmp.Diff(want, e.Complaint); diff != "" {
			t.Errorf("follow-up's clock (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]uint32{1, 2}, dueUIDs(t, l)); diff != "" {
			t.Errorf("Due before the answer (-want +got):\n%s", diff)
		}
		// Recorded again (a retry), the follow-up restarts nothing.
		follow = clockAt(t, l, 4, "T-1", Clock{Complaint: true, Received: now.Add(time.Hour), Period: 14 * day})
		if e, _ := l.Get(ctx, follow); !e.Complaint.AnswerBy.Equal(received.Add(14 * day)) {
			t.Errorf("re-recorded follow-up: AnswerBy = %v, want the first receipt's deadline", e.Complaint.AnswerBy)
		}

		// Day 6: the answer on the merits stops the conversation's clock.
		now = received.Add(6 * day)
		clockAt(t, l, 4, "T-1", Clock{Complaint: true, OnTheMerits: true})
		if diff := cmp.Diff([]uint32{2}, dueUIDs(t, l)); diff != "" {
			t.Errorf("Due after the answer (-want +got):\n%s", diff)
		}
		e, err = l.Get(ctx, first)
		if err != nil {
			t.Fatal(err)
		}
		if !e.Complaint.Answered.Equal(now) || e.Complaint.Open() {
			t.Errorf("first complaint after the answer: %+v, want answered at %v", e.Complaint, now)
		}
		if e.Ticket != "T-1" {
			t.Errorf("Ticket = %q, want T-1", e.Ticket)
		}

		// A new complaint in the answered conversation starts a new clock.
		now = received.Add(20 * day)
		again := clockAt(t, l, 5, "T-1", Clock{Complaint: true, Received: now, Period: 14 * day})
		if e, _ := l.Get(ctx, again); e.Complaint == nil || e.Complaint.Joined || !e.Complaint.AnswerBy.Equal(now.Add(14*day)) {
			t.Errorf("new complaint after the answer: %+v, want its own clock", e.Complaint)
		}
		open, overdue, err := l.DueCounts(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		if open != 1 || overdue != 1 {
			t.Errorf("DueCounts = %d open, %d overdue; want 1, 1", open, overdue)
		}
	})
}

// Each clock event happens once per complaint, whichever daemon asks; a
// warning that could not be sent is taken back and tried again.
func TestComplaintClockEventsOnce(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		day := 24 * time.Hour
		received := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
		now := received
		l := openAt(t, target, &now)
		loc := clockAt(t, l, 1, "", Clock{Complaint: true, Received: received, Period: 14 * day})

		pending := func(ev ClockEvent, before time.Duration) int {
			t.Helper()
			es, err := l.Pending(ctx, ev, now, before)
			if err != nil {
				t.Fatal(err)
			}
			return len(es)
		}
		now = received.Add(10 * day)
		if n := pending(ClockNotified, 3*day); n != 0 {
			t.Errorf("4 days before the deadline: %d to notify, want 0", n)
		}
		now = received.Add(11 * day)
		if n := pending(ClockNotified, 3*day); n != 1 {
			t.Fatalf("3 days before the deadline: %d to notify, want 1", n)
		}
		if ok, err := l.MarkClock(ctx, loc, ClockNotified); err != nil || !ok {
			t.Fatalf("MarkClock = %v, %v; want true", ok, err)
		}
		if ok, err := l.MarkClock(ctx, loc, ClockNotified); err != nil || ok {
			t.Errorf("MarkClock again = %v, %v; want false (once)", ok, err)
		}
		if n := pending(ClockNotified, 3*day); n != 0 {
			t.Errorf("after the warning: %d to notify, want 0", n)
		}
		if err := l.UnmarkClock(ctx, loc, ClockNotified); err != nil {
			t.Fatal(err)
		}
		if n := pending(ClockNotified, 3*day); n != 1 {
			t.Errorf("after the warning was taken back: %d to notify, want 1", n)
		}

		if n := pending(ClockLapsed, 0); n != 0 {
			t.Errorf("before the deadline: %d lapsed, want 0", n)
		}
		now = received.Add(14*day + time.Second)
		if n := pending(ClockLapsed, 0); n != 1 {
			t.Fatalf("after the deadline: %d lapsed, want 1", n)
		}
		if ok, err := l.MarkClock(ctx, loc, ClockLapsed); err != nil || !ok {
			t.Fatalf("MarkClock lapsed = %v, %v; want true", ok, err)
		}
		if n := pending(ClockLapsed, 0); n != 0 {
			t.Errorf("after the lapse was recorded: %d lapsed, want 0", n)
		}
		e, err := l.Get(ctx, loc)
		if err != nil {
			t.Fatal(err)
		}
		if !e.Complaint.Lapsed.Equal(now) {
			t.Errorf("Lapsed = %v, want %v", e.Complaint.Lapsed, now)
		}
	})
}
