package main

import (
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"triage"
	"triage/internal/mailauth"
	"triage/internal/settings"
	"triage/internal/watch"
)

// Several inboxes in one process: the watch configuration's inboxes: list.
// Each entry holds what differs per inbox (its imap and smtp sections,
// outbox, from, instructions, reply_mode, and a name for the logs) over the
// configuration's other settings, which every inbox shares (pipeline,
// limits, store, ledger, log, ...). Each inbox gets its own watcher, mail
// sender and pipeline; all of them use the one store.

// inboxEntry is one entry of inboxes:, read against inboxSettings once the
// shared settings are resolved.
type inboxEntry struct{ node yaml.Node }

// UnmarshalYAML keeps the entry's node (its lines are the file's).
func (e *inboxEntry) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return errors.New("each inbox is a section of settings (name, imap, smtp, outbox, from, instructions, reply_mode)")
	}
	e.node = *n
	return nil
}

// inboxKeys are the watch settings an inbox entry may set, under the key
// it sets them with; the imap.* and smtp.* keys keep theirs.
var inboxKeys = map[string]string{
	"outbox":                "outbox",
	"pipeline.from":         "from",
	"pipeline.instructions": "instructions",
	"reply_mode":            "reply_mode",
}

// inboxSettings are the settings of one inbox entry, bound to o (a copy of
// the shared settings): the watch settings of inboxKeys and of the imap and
// smtp sections, with no flag nor variable (those apply to every inbox
// through the shared settings), and the inbox's name.
func inboxSettings(o *watchOptions) settings.Table {
	t := settings.Table{{Key: "name", Usage: "the inbox's name in the logs (default: its account)", Var: settings.String(&o.Name, "")}}
	for _, s := range watchSettings(o) {
		key, ok := inboxKeys[s.Key]
		if !ok && (strings.HasPrefix(s.Key, "imap.") || strings.HasPrefix(s.Key, "smtp.")) {
			key, ok = s.Key, true
		}
		if !ok {
			continue
		}
		c := *s
		c.Key, c.Aliases, c.Flag, c.Short, c.Env = key, nil, "", "", ""
		t = append(t, &c)
	}
	return t
}

// inboxOptions are the settings of each inbox of the configuration: with
// inboxes:, each entry over a copy of the shared settings o; without, o
// itself. Problems with an entry are added to p, naming it.
func inboxOptions(path string, o *watchOptions, p *problems) []*watchOptions {
	if len(o.Inboxes) == 0 {
		return []*watchOptions{o}
	}
	var out []*watchOptions
	for i, e := range o.Inboxes {
		io := o.clone()
		t := inboxSettings(io)
		f, err := settings.ParseNode(path, &e.node, t)
		if err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				p.add("inboxes[%d]: %s", i+1, line)
			}
			continue
		}
		t.Apply(f)
		if err := t.Check(); err != nil {
			for _, e := range unjoin(err) {
				p.add("inboxes[%d]: %v", i+1, e)
			}
		}
		io.label = fmt.Sprintf("inboxes[%d]", i+1)
		if io.Name != "" {
			io.label += " (" + io.Name + ")"
		}
		out = append(out, io)
	}
	return out
}

// clone is a copy of o for one inbox: what an inbox may change is copied,
// the rest shared (read only).
func (o *watchOptions) clone() *watchOptions {
	c := *o
	c.Inboxes, c.table = nil, nil
	for _, s := range []**mailauth.Setting{&c.IMAP.OAuth2, &c.SMTP.OAuth2} {
		if *s != nil {
			v := **s
			*s = &v
		}
	}
	if c.SaveSent != nil {
		v := *c.SaveSent
		c.SaveSent = &v
	}
	return &c
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// account is the ledger account of the inbox (as watch.New derives it).
func (o *watchOptions) account() string {
	if o.Account != "" {
		return o.Account
	}
	return watch.AccountOf(o.IMAP.User, o.IMAP.Addr)
}

// secretOf is secret for an inbox of the configuration: the only inbox
// reads the environment first, as every command does; each of several
// inboxes reads its own *_file (or literal) first and the environment, which
// they would all share, only without one.
func (o *watchOptions) secretOf(env, file, literal string) (string, error) {
	if o.label == "" {
		return secret(env, file, literal)
	}
	if file != "" || literal != "" {
		return secret("", file, literal)
	}
	return secret(env, "", "")
}

// checkInbox validates one inbox (its servers, secrets and pipeline),
// reading files but creating and connecting nothing. Its problems are
// added to p, each naming the inbox when there are several.
func checkInbox(path string, o *watchOptions, p *problems) *watchSetup {
	var q problems
	is := &watchSetup{o: o}
	imapSetup(o, path, is, &q)
	smtpOAuth2Setup(o, is, &q)

	// smtp or outbox
	switch {
	case o.SMTP.Addr != "":
		is.smtp = smtpClient(o, is.smtpOAuth2, path, &q)
	case o.Outbox != "":
		if err := checkDirOrParent("outbox", o.Outbox); err != nil {
			q.addErr(err)
		}
	case o.DryRun || o.ReplyMode == string(triage.ReplyDraft):
		// Nothing is sent: drafts need no SMTP (a scenario with
		// reply_mode: send then fails, left for a person).
	default:
		q.add("no way to send replies: set smtp.addr in %s (or outbox: DIR, or reply_mode: draft)", path)
	}

	// the pipeline: instructions, registry, store
	is.parts = checkPipeline(o.pipelineOptions, &q)
	checkAutoCanSend(o, is.parts, path, &q)
	for _, e := range q.errs {
		if o.label != "" {
			e = fmt.Errorf("%s: %w", o.label, e)
		}
		p.errs = append(p.errs, e)
	}
	return is
}

// checkInboxesDistinct reports two inboxes that would watch one mailbox
// (the same account and mailbox): their ledger rows would be one.
func checkInboxesDistinct(inboxes []*watchOptions, p *problems) {
	seen := map[string]string{}
	for _, o := range inboxes {
		k := o.account() + "\x00" + o.Mailbox
		if prev, ok := seen[k]; ok {
			p.add("%s and %s both watch mailbox %s of account %s: give each inbox its own imap.user, imap.mailbox or imap.account", prev, o.label, o.Mailbox, o.account())
			continue
		}
		seen[k] = o.label
	}
}
