package watch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"triage"
	"triage/internal/ledger"
	"triage/internal/processor"
)

// dryPass is a pass that changes nothing: the mailbox is opened read-only
// (EXAMINE), every message without our keyword that the ledger (when there
// is one) has not settled is fetched with BODY.PEEK and run through the
// pipeline (itself in dry run), and its outcome is logged. No ledger entry,
// flag, move or append. A daemon remembers what it looked at, so each
// message is shown once per run.
func (w *Watcher) dryPass(ctx, hard context.Context, c *imapclient.Client) error {
	sel, err := c.Select(w.cfg.Mailbox, &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		return fmt.Errorf("watch: examine %s: %w", w.cfg.Mailbox, err)
	}
	crit := &imap.SearchCriteria{UID: []imap.UIDSet{{imap.UIDRange{Start: 1, Stop: 0}}}}
	if w.keywordsAllowed(sel.PermanentFlags) {
		crit.NotFlag = []imap.Flag{imap.Flag(w.cfg.Keyword)}
	}
	data, err := c.UIDSearch(crit, nil).Wait()
	if err != nil {
		return fmt.Errorf("watch: search %s: %w", w.cfg.Mailbox, err)
	}
	uids := data.AllUIDs()
	slices.Sort(uids)
	if w.dryDone == nil {
		w.dryDone = map[[2]uint32]bool{}
	}
	for _, uid := range uids {
		if ctx.Err() != nil {
			return nil
		}
		at := [2]uint32{sel.UIDValidity, uint32(uid)}
		if uid == 0 || w.dryDone[at] {
			continue
		}
		if err := w.dryHandle(hard, c, sel.UIDValidity, uid); err != nil {
			return err
		}
		w.dryDone[at] = true
	}
	return nil
}

func (w *Watcher) dryHandle(ctx context.Context, c *imapclient.Client, validity uint32, uid imap.UID) error {
	loc := ledger.Loc{Account: w.cfg.Account, Mailbox: w.cfg.Mailbox, UIDValidity: validity, UID: uint32(uid)}
	hdr, size, internal, ok, err := fetchHeadDated(c, uid, w.cfg.MaxMessageBytes)
	if err != nil || !ok {
		return err
	}
	id := identify(hdr)
	if l := w.cfg.Ledger; l != nil {
		if e, err := l.Get(ctx, loc); err == nil && e.State.Terminal() {
			return nil
		}
		if _, err := l.TerminalByKey(ctx, id.Key, loc); err == nil {
			return nil
		} else if !errors.Is(err, ledger.ErrNotFound) {
			return err
		}
	}
	if size > w.cfg.MaxMessageBytes {
		w.log.Info("dry run: message", "uid", uid, "message_id", id.MessageID, "from", id.From, "status", triage.StatusFailed, "reason", triage.ReasonTooLarge)
		return nil
	}
	raw, ok, err := fetchBody(c, uid)
	if err != nil || !ok {
		return err
	}
	out := w.process(ctx, processor.Input{Name: loc.String(), Raw: raw, Key: id.Key, Received: internal})
	w.st.ByState[ledger.StateOf(out.Status)]++
	attrs := []any{"uid", uid, "message_id", id.MessageID, "from", id.From, "status", out.Status, "reason", out.Reason,
		"scenario", out.Scenario, "dry_run", out.DryRun}
	if out.Reply != nil {
		attrs = append(attrs, "reply_to", out.Reply.To, "reply_subject", out.Reply.Subject)
	}
	var calls []string
	for _, fc := range out.FunctionCalls {
		s := fc.Name
		switch {
		case fc.Blocked:
			s += " (blocked)"
		case fc.DryRun:
			s += " (dry run)"
		case !fc.OK:
			s += " (error)"
		}
		calls = append(calls, s)
	}
	b, _ := json.Marshal(calls)
	attrs = append(attrs, "calls", string(b))
	w.log.Info("dry run: message", attrs...)
	return nil
}
