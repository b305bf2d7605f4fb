package watch

import (
	"context"
	"fmt"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"triage"
	"triage/internal/ledger"
	"triage/internal/message"
	"triage/internal/replies"
)

// settle flags the message (keyword, or \Seen) and moves it where its state
// says, then records that in the ledger.
func (w *Watcher) settle(ctx context.Context, c *imapclient.Client, b *box, e ledger.Entry) error {
	return w.settleFiling(ctx, c, b, e, nil)
}

// settleFiling is settle that also stores sent, the reply the message was
// answered with (nil: none), in the Sent folder after the flag and the
// move, and records the message settled and the reply filed in one ledger
// commit (ledger.MarkSettled). A reply the server refuses to store is
// logged, and the message settled all the same.
func (w *Watcher) settleFiling(ctx context.Context, c *imapclient.Client, b *box, e ledger.Entry, sent *replies.Reply) error {
	b.imap.Lock()
	defer b.imap.Unlock()
	uids := imap.UIDSetNum(imap.UID(e.UID))
	flag := imap.FlagSeen
	if b.keywords {
		flag = imap.Flag(w.cfg.Keyword)
	}
	err := c.Store(uids, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{flag}}, nil).Close()
	if err != nil && b.keywords && isNo(err) {
		w.log.Warn("server refused the keyword; marking \\Seen instead", "keyword", w.cfg.Keyword, "err", err)
		b.keywords = false
		err = c.Store(uids, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagSeen}}, nil).Close()
	}
	if err != nil {
		return fmt.Errorf("watch: flag uid %d: %w", e.UID, err)
	}
	var dest string
	switch e.State {
	case ledger.StateReplied:
		dest = w.cfg.ProcessedFolder
	case ledger.StateFailed, ledger.StateNeedsHuman, ledger.StateOverLimit:
		dest = w.cfg.FailedFolder
	case ledger.StateSkipped:
		if e.Reason == triage.ReasonSpam {
			dest = w.junk // "" when the server has no Junk folder: left in place
		}
	}
	if dest != "" && dest != w.cfg.Mailbox {
		if err := w.ensureFolder(c, b, dest); err != nil {
			return err
		}
		if _, err := c.Move(uids, dest).Wait(); err != nil {
			return fmt.Errorf("watch: move uid %d to %s: %w", e.UID, dest, err)
		}
	}
	var filed triage.Key
	if sent != nil {
		if err := w.appendSent(c, b, *sent); err != nil {
			w.log.WarnContext(ctx, "could not store the reply in the Sent folder", "folder", w.sent, "reply_message_id", sent.MessageID, "err", err)
		} else {
			filed = sent.Key
		}
	}
	return w.ledgerErr(w.cfg.Ledger.MarkSettled(context.WithoutCancel(ctx), e.Loc, filed))
}

// ensureFolder makes sure folder exists; the caller holds b.imap. A folder
// triage may create (see creatable) is created when missing; a missing Sent
// or Drafts folder is an error.
func (w *Watcher) ensureFolder(c *imapclient.Client, b *box, folder string) error {
	if b.folders[folder] {
		return nil
	}
	if _, err := c.Status(folder, &imap.StatusOptions{UIDValidity: true}).Wait(); err != nil {
		if !w.creatable(folder) {
			return fmt.Errorf("watch: folder %s: %w", folder, err)
		}
		if cerr := c.Create(folder, nil).Wait(); cerr != nil {
			// Lost a race with another client? Then it exists now.
			if _, err := c.Status(folder, &imap.StatusOptions{UIDValidity: true}).Wait(); err != nil {
				return fmt.Errorf("watch: create folder %s: %w", folder, cerr)
			}
		} else {
			w.log.Info("created folder", "folder", folder)
		}
	}
	b.folders[folder] = true
	return nil
}

// appendSent stores a sent reply in the Sent folder; the caller holds
// b.imap and records it in the ledger.
func (w *Watcher) appendSent(c *imapclient.Client, b *box, r replies.Reply) error {
	if err := w.ensureFolder(c, b, w.sent); err != nil {
		return err
	}
	return appendMessage(c, w.sent, r.Raw, &imap.AppendOptions{Flags: []imap.Flag{imap.FlagSeen}, Time: r.SentAt}, "append")
}

// appendMessage appends raw to folder; what names the operation in the
// error ("append", "append draft").
func appendMessage(c *imapclient.Client, folder string, raw []byte, opts *imap.AppendOptions, what string) error {
	cmd := c.Append(folder, int64(len(raw)), opts)
	if _, err := cmd.Write(raw); err != nil {
		cmd.Close()
		return fmt.Errorf("watch: %s to %s: %w", what, folder, err)
	}
	if err := cmd.Close(); err != nil {
		return fmt.Errorf("watch: %s to %s: %w", what, folder, err)
	}
	if _, err := cmd.Wait(); err != nil {
		return fmt.Errorf("watch: %s to %s: %w", what, folder, err)
	}
	return nil
}

// holdsMessageID reports whether the selected folder holds a message with
// this Message-ID; folder names it in the error.
func holdsMessageID(c *imapclient.Client, folder, messageID string) (bool, error) {
	crit := &imap.SearchCriteria{Header: []imap.SearchCriteriaHeaderField{{Key: "Message-Id", Value: messageID}}}
	data, err := c.UIDSearch(crit, nil).Wait()
	if err != nil {
		return false, fmt.Errorf("watch: search %s: %w", folder, err)
	}
	return len(data.AllUIDs()) > 0, nil
}

// lockedHeader is fetchHead for a worker of the pass: it holds the
// connection while it fetches.
func (b *box) lockedHeader(c *imapclient.Client, uid imap.UID, maxSize int64) (hdr []byte, size int64, internal time.Time, ok bool, err error) {
	b.imap.Lock()
	defer b.imap.Unlock()
	return fetchHeadDated(c, uid, maxSize)
}

// lockedBody is fetchBody for a worker of the pass: it holds the connection
// while it fetches.
func (b *box) lockedBody(c *imapclient.Client, uid imap.UID) ([]byte, bool, error) {
	b.imap.Lock()
	defer b.imap.Unlock()
	return fetchBody(c, uid)
}

// maxHeaderFetch bounds the header fetched of a message under the size
// limit: one byte over what the parser accepts, so a header over it is
// still refused as too large.
const maxHeaderFetch = message.DefaultMaxHeaderBytes + 1

// maxOversizeFetch bounds what is read of a message over the size limit:
// its first bytes, enough for the header fields that name it in the
// ledger (Message-ID, From, Subject), whatever its size.
const maxOversizeFetch = 32 << 10

// fetchHead fetches the size of one message (RFC822.SIZE) alone, then its
// header: at most maxHeaderFetch bytes of it (BODY.PEEK[HEADER]<0.N>) when
// the message is within maxSize, else only its first maxOversizeFetch
// bytes (BODY.PEEK[]<0.N>, which a server serves without reading the rest
// of a header of any size). ok is false when the message is gone.
func fetchHead(c *imapclient.Client, uid imap.UID, maxSize int64) (hdr []byte, size int64, ok bool, err error) {
	hdr, size, _, ok, err = fetchHeadDated(c, uid, maxSize)
	return hdr, size, ok, err
}

// fetchHeadDated is fetchHead that also returns the message's INTERNALDATE
// (fetched with its size): when the server received it, for the
// complaint clock.
func fetchHeadDated(c *imapclient.Client, uid imap.UID, maxSize int64) (hdr []byte, size int64, internal time.Time, ok bool, err error) {
	bufs, err := c.Fetch(imap.UIDSetNum(uid), &imap.FetchOptions{UID: true, RFC822Size: true, InternalDate: true}).Collect()
	if err != nil {
		return nil, 0, time.Time{}, false, fmt.Errorf("watch: fetch size uid %d: %w", uid, err)
	}
	for _, b := range bufs {
		if b.UID == uid {
			size, internal, ok = b.RFC822Size, b.InternalDate, true
		}
	}
	if !ok {
		return nil, 0, time.Time{}, false, nil
	}
	sec := &imap.FetchItemBodySection{Specifier: imap.PartSpecifierHeader, Peek: true,
		Partial: &imap.SectionPartial{Offset: 0, Size: maxHeaderFetch}}
	if size > maxSize {
		sec = &imap.FetchItemBodySection{Peek: true, Partial: &imap.SectionPartial{Offset: 0, Size: maxOversizeFetch}}
	}
	bufs, err = c.Fetch(imap.UIDSetNum(uid), &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{sec}}).Collect()
	if err != nil {
		return nil, 0, time.Time{}, false, fmt.Errorf("watch: fetch header uid %d: %w", uid, err)
	}
	for _, b := range bufs {
		if b.UID == uid {
			return b.FindBodySection(sec), size, internal, true, nil
		}
	}
	return nil, 0, time.Time{}, false, nil
}

// fetchBody fetches the whole message with BODY.PEEK[].
func fetchBody(c *imapclient.Client, uid imap.UID) ([]byte, bool, error) {
	sec := &imap.FetchItemBodySection{Peek: true}
	bufs, err := c.Fetch(imap.UIDSetNum(uid), &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{sec}}).Collect()
	if err != nil {
		return nil, false, fmt.Errorf("watch: fetch uid %d: %w", uid, err)
	}
	for _, b := range bufs {
		if b.UID == uid {
			return b.FindBodySection(sec), true, nil
		}
	}
	return nil, false, nil
}
