package watch

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// maxFoldersListed bounds the folder names a FolderError lists.
const maxFoldersListed = 50

// FolderError is a configured Sent, Drafts or Junk folder the server does not
// have. It is a configuration error: Run and RunOnce stop at once, since
// reconnecting cannot make the folder appear (triage never creates a folder
// a person named for a role: a misspelt name would fill a folder nobody
// reads).
type FolderError struct {
	Setting string   // imap.sent_folder, imap.drafts_folder or imap.junk_folder
	Folder  string   // the configured name
	Role    string   // \Sent, \Drafts or \Junk
	Addr    string   // the IMAP server
	Found   string   // the folder the server marks with Role, "" when none
	Folders []string // the folders that do exist, sorted (at most maxFoldersListed)
	More    int      // folders not listed
}

func (e *FolderError) Error() string {
	quoted := make([]string, len(e.Folders))
	for i, f := range e.Folders {
		quoted[i] = strconv.Quote(f)
	}
	list := strings.Join(quoted, ", ")
	if e.More > 0 {
		list += fmt.Sprintf(" and %d more", e.More)
	}
	hint := fmt.Sprintf("leave %s unset to use the folder the server marks %s (it marks none)", e.Setting, e.Role)
	if e.Found != "" {
		hint = fmt.Sprintf("leave %s unset to use %q, the folder the server marks %s", e.Setting, e.Found, e.Role)
	}
	return fmt.Sprintf("watch: %s %q: no such folder on %s; its folders are %s; set one of them, or %s",
		e.Setting, e.Folder, e.Addr, list, hint)
}

// findFolders runs once per connection, after the login: it lists the
// folders, with their special-use attributes (RFC 6154) when the server
// offers them, and settles the Sent and Drafts folders of this session. A
// configured name must exist (else a *FolderError); an empty one is the
// folder marked \Sent or \Drafts. Without a \Sent folder there is none
// (replies are not filed, and people's replies are not seen); without a
// \Drafts folder drafts go to DefaultDraftsFolder, created when first
// needed.
func (w *Watcher) findFolders(c *imapclient.Client) error {
	var opts *imap.ListOptions
	caps := c.Caps()
	if caps.Has(imap.CapSpecialUse) && (caps.Has(imap.CapListExtended) || caps.Has(imap.CapIMAP4rev2)) {
		opts = &imap.ListOptions{ReturnSpecialUse: true}
	}
	// Without LIST-EXTENDED a plain LIST: some servers (Gmail) include the
	// attributes anyway.
	list, err := c.List("", "*", opts).Collect()
	if err != nil {
		return fmt.Errorf("watch: list folders: %w", err)
	}
	var names []string
	marked := map[imap.MailboxAttr]string{}
	for _, d := range list {
		if hasAttr(d.Attrs, imap.MailboxAttrNoSelect) || hasAttr(d.Attrs, imap.MailboxAttrNonExistent) {
			continue
		}
		names = append(names, d.Mailbox)
		for _, a := range []imap.MailboxAttr{imap.MailboxAttrSent, imap.MailboxAttrDrafts, imap.MailboxAttrJunk} {
			if marked[a] == "" && hasAttr(d.Attrs, a) {
				marked[a] = d.Mailbox
			}
		}
	}
	slices.Sort(names)
	sent, err := w.roleFolder("imap.sent_folder", w.cfg.SentFolder, imap.MailboxAttrSent, marked, names)
	if err != nil {
		return err
	}
	drafts, err := w.roleFolder("imap.drafts_folder", w.cfg.DraftsFolder, imap.MailboxAttrDrafts, marked, names)
	if err != nil {
		return err
	}
	junk, err := w.roleFolder("imap.junk_folder", w.cfg.JunkFolder, imap.MailboxAttrJunk, marked, names)
	if err != nil {
		return err
	}
	fallback := drafts == ""
	if fallback {
		drafts = DefaultDraftsFolder
	}
	if !w.foldersKnown || sent != w.sent || drafts != w.drafts || junk != w.junk {
		w.log.Info("folders", "sent", sent, "sent_from", folderSource(w.cfg.SentFolder, sent, "none: replies are not filed, people's replies are not seen"),
			"drafts", drafts, "drafts_from", folderSource(w.cfg.DraftsFolder, marked[imap.MailboxAttrDrafts], "default: created when first needed"),
			"junk", junk, "junk_from", folderSource(w.cfg.JunkFolder, junk, "none: spam stays in the mailbox, flagged"))
	}
	w.sent, w.drafts, w.junk, w.draftsFallback, w.foldersKnown = sent, drafts, junk, fallback, true
	return nil
}

// roleFolder is the folder of a role: configured (it must exist), else the
// one the server marks with attr ("" when none).
func (w *Watcher) roleFolder(setting, configured string, attr imap.MailboxAttr, marked map[imap.MailboxAttr]string, names []string) (string, error) {
	if configured == "" {
		return marked[attr], nil
	}
	if slices.Contains(names, configured) || strings.EqualFold(configured, "INBOX") {
		return configured, nil
	}
	e := &FolderError{Setting: setting, Folder: configured, Role: string(attr), Addr: w.cfg.Addr, Found: marked[attr], Folders: names}
	if len(names) > maxFoldersListed {
		e.Folders, e.More = names[:maxFoldersListed], len(names)-maxFoldersListed
	}
	return "", e
}

// folderSource says where a folder's name came from, for the log;
// otherwise is what happens when neither the configuration nor the server
// names one.
func folderSource(configured, found, otherwise string) string {
	switch {
	case configured != "":
		return "configuration"
	case found != "":
		return "special-use"
	}
	return otherwise
}

// hasAttr reports whether attrs holds a (attributes are case-insensitive).
func hasAttr(attrs []imap.MailboxAttr, a imap.MailboxAttr) bool {
	for _, x := range attrs {
		if strings.EqualFold(string(x), string(a)) {
			return true
		}
	}
	return false
}

// creatable reports whether ensureFolder may create folder: the folders
// triage is told to fill (processed, failed) and the default Drafts folder
// are created when missing; a Sent, Drafts or Junk folder configured or
// found by role is the person's, never created.
func (w *Watcher) creatable(folder string) bool {
	return folder != w.sent && folder != w.junk && (folder != w.drafts || w.draftsFallback)
}
