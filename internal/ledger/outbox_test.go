package ledger

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"triage/internal/pgtest"
)

func TestOutboxIndex(t *testing.T) {
	pgtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
		l := openAt(t, target, &now)
		if _, err := l.Outbox(ctx, "<none@x>"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Outbox of an unknown id: err = %v, want ErrNotFound", err)
		}
		if err := l.IndexOutbox(ctx, OutboxEntry{}); err == nil {
			t.Error("an entry without a Message-ID was indexed")
		}
		steps := []OutboxEntry{
			{MessageID: "<r1@us>", Key: "k1", Path: "outbox/r1.eml"},
			{MessageID: "<r2@us>", Key: "k2"}, // sent by SMTP
			{MessageID: "<r1@us>", Key: "k1", Path: "outbox/r1-moved.eml", Created: now.Add(time.Hour)},
		}
		for _, e := range steps {
			if err := l.IndexOutbox(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		var got []OutboxEntry
		for _, id := range []string{"<r1@us>", "<r2@us>"} {
			e, err := l.Outbox(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, e)
		}
		want := []OutboxEntry{
			{MessageID: "<r1@us>", Key: "k1", Path: "outbox/r1-moved.eml", Created: now.Add(time.Hour)},
			{MessageID: "<r2@us>", Key: "k2", Created: now},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("outbox index (-want +got):\n%s", diff)
		}
	})
}
