package mailtest

import (
	"slices"
	"strings"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
)

// Special-use mailboxes (RFC 6154) on the in-memory server. imapmemserver
// keeps no special-use attribute (its CREATE ignores USE), so the session
// records every mailbox with its attributes (IMAPOptions.SpecialUse, and
// CREATE ... (USE (...)) from a client) and answers a LIST that asks for
// them itself; every other LIST goes to imapmemserver.

// memDelim is imapmemserver's hierarchy delimiter.
const memDelim = '/'

func (sess *memSession) Create(name string, options *imap.CreateOptions) error {
	if err := sess.UserSession.Create(name, options); err != nil {
		return err
	}
	var attrs []imap.MailboxAttr
	if options != nil {
		attrs = slices.Clone(options.SpecialUse)
	}
	sess.s.mu.Lock()
	sess.s.special[strings.TrimRight(name, string(memDelim))] = attrs
	sess.s.mu.Unlock()
	return nil
}

func (sess *memSession) Delete(name string) error {
	if err := sess.UserSession.Delete(name); err != nil {
		return err
	}
	sess.s.mu.Lock()
	delete(sess.s.special, name)
	sess.s.mu.Unlock()
	return nil
}

func (sess *memSession) Rename(name, newName string, options *imap.RenameOptions) error {
	if err := sess.UserSession.Rename(name, newName, options); err != nil {
		return err
	}
	sess.s.mu.Lock()
	sess.s.special[newName] = sess.s.special[name]
	delete(sess.s.special, name)
	sess.s.mu.Unlock()
	return nil
}

// List answers LIST ... RETURN (SPECIAL-USE) and LIST (SPECIAL-USE) ...
// with the recorded attributes, and with IMAPOptions.PlainListRoles every
// LIST.
func (sess *memSession) List(w *imapserver.ListWriter, ref string, patterns []string, options *imap.ListOptions) error {
	if sess.s.plainListRoles && (options == nil || options.ReturnStatus == nil) {
		options = &imap.ListOptions{ReturnSpecialUse: true}
	}
	if options == nil || !options.ReturnSpecialUse && !options.SelectSpecialUse || options.ReturnStatus != nil || len(patterns) == 0 {
		return sess.UserSession.List(w, ref, patterns, options)
	}
	sess.s.mu.Lock()
	var list []imap.ListData
	for name, attrs := range sess.s.special {
		match := false
		for _, p := range patterns {
			match = match || imapserver.MatchList(name, memDelim, ref, p)
		}
		if !match || options.SelectSpecialUse && len(attrs) == 0 {
			continue
		}
		list = append(list, imap.ListData{Mailbox: name, Delim: memDelim, Attrs: slices.Clone(attrs)})
	}
	sess.s.mu.Unlock()
	slices.SortFunc(list, func(a, b imap.ListData) int { return strings.Compare(a.Mailbox, b.Mailbox) })
	for i := range list {
		if err := w.WriteList(&list[i]); err != nil {
			return err
		}
	}
	return nil
}
