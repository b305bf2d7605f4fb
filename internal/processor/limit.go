package processor

import (
	"context"
	"time"
)

// LimitCounter is a History that counts more against the per-sender limit
// than the replies that went out: the outbox counts its drafts too (each
// cost a model run and perhaps a ticket), though they are no reply for
// loop breaking.
type LimitCounter interface {
	CountedSince(ctx context.Context, addr string, since time.Time) (int, error)
}

// limitCount is what counts against addr's per-sender limit since since.
func (p *Processor) limitCount(ctx context.Context, addr string, since time.Time) (int, error) {
	if c, ok := p.cfg.History.(LimitCounter); ok {
		return c.CountedSince(ctx, addr, since)
	}
	return p.cfg.History.RepliesSince(ctx, addr, since)
}
