package processor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"triage"
	"triage/internal/message"
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

// overLimit reports a sender past Config.PerSenderLimit: its From or reply
// address already has that many replies within PerSenderWindow. It returns
// the failure reason and detail, or "".
func (p *Processor) overLimit(ctx context.Context, msg *message.Message) (reason triage.Reason, detail string) {
	if p.cfg.History == nil || p.cfg.PerSenderLimit <= 0 {
		return "", ""
	}
	since := p.cfg.Now().Add(-p.cfg.PerSenderWindow)
	for i, addr := range []string{msg.From.Address, msg.ReplyTo} {
		if addr == "" || i == 1 && strings.EqualFold(addr, msg.From.Address) {
			continue
		}
		n, err := p.limitCount(ctx, addr, since)
		if err != nil {
			return triage.ReasonHistoryError, fmt.Sprintf("reply history: %v; the per-sender limit cannot be checked, left for a person", err)
		}
		if n >= p.cfg.PerSenderLimit {
			return triage.ReasonPerSenderLimit, fmt.Sprintf("%s was already answered %d times in the last %v (limit %d); left for a person",
				addr, n, p.cfg.PerSenderWindow, p.cfg.PerSenderLimit)
		}
	}
	return "", ""
}
