package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"triage/internal/mailauth"
	"triage/internal/trace"
)

// imapOAuth2Setup builds the imap section's token source from its oauth2
// block (nil without one). Nothing is contacted.
func imapOAuth2Setup(o *watchOptions, ws *watchSetup, p *problems) {
	if s := o.IMAP.OAuth2; s != nil {
		if s.SameAs != "" {
			p.add("imap.oauth2: %s: only the smtp section can share another section's oauth2", s.SameAs)
		} else if src, err := mailauth.New(s.Config, mailauth.Options{Name: "imap.oauth2"}); err != nil {
			p.addErr(err)
		} else {
			ws.imapOAuth2 = src
		}
	}
}

// smtpOAuth2Setup builds the smtp section's token source (after
// imapOAuth2Setup) and applies the defaults: "oauth2: imap" shares imap's
// source, and an smtp section with OAuth2 but no user logs in as
// imap.user. Nothing is contacted.
func smtpOAuth2Setup(o *watchOptions, ws *watchSetup, p *problems) {
	s := o.SMTP.OAuth2
	if s == nil || o.SMTP.Addr == "" {
		return
	}
	if o.SMTP.User == "" {
		o.SMTP.User = o.IMAP.User
	}
	switch {
	case s.SameAs == "imap" && o.IMAP.OAuth2 == nil:
		p.add("smtp.oauth2: imap: the imap section has no oauth2 block to share")
	case s.SameAs == "imap":
		ws.smtpOAuth2 = ws.imapOAuth2
	default:
		if src, err := mailauth.New(s.Config, mailauth.Options{Name: "smtp.oauth2"}); err != nil {
			p.addErr(err)
		} else {
			ws.smtpOAuth2 = src
		}
	}
}

// observeOAuth2 sends the sources' logs to log and their token expiries
// to the metrics.
func (ws *watchSetup) observeOAuth2(log *slog.Logger, met *trace.Metrics) {
	if ws.imapOAuth2 != nil {
		ws.imapOAuth2.Observe(log, func(t time.Time) { met.TokenExpiry("imap", t) })
	}
	if ws.smtpOAuth2 != nil && ws.smtpOAuth2 != ws.imapOAuth2 {
		ws.smtpOAuth2.Observe(log, func(t time.Time) { met.TokenExpiry("smtp", t) })
	}
}

// checkOAuth2 obtains one access token from each configured source and
// reports for which account and how long it is valid (never the token);
// with w, one line each is printed.
func checkOAuth2(w io.Writer, ws *watchSetup) ([]checkToken, error) {
	type src struct {
		key, user string
		s         *mailauth.Source
		is        *watchSetup
	}
	var list []src
	for _, is := range ws.inboxes {
		prefix := ""
		if is.o.label != "" {
			prefix = is.o.label + ": "
		}
		list = append(list, src{prefix + "imap.oauth2", is.o.IMAP.User, is.imapOAuth2, is})
		if is.smtpOAuth2 != is.imapOAuth2 {
			list = append(list, src{prefix + "smtp.oauth2", is.o.SMTP.User, is.smtpOAuth2, is})
		}
	}
	var p problems
	var out []checkToken
	for _, c := range list {
		if c.s == nil {
			continue
		}
		tok, err := c.s.Token()
		if err != nil {
			p.addErr(err)
			continue
		}
		r := checkToken{Setting: c.key, Account: c.user, TokenURL: c.s.TokenURL(), Grant: c.s.Grant()}
		valid := "no expiry given"
		if !tok.Expiry.IsZero() {
			left := time.Until(tok.Expiry).Round(time.Second)
			exp := tok.Expiry.UTC().Truncate(time.Second)
			r.Expires, r.ValidForSeconds = &exp, int64(left/time.Second)
			valid = "valid for " + left.String()
		}
		shared := ""
		if c.s == c.is.smtpOAuth2 && strings.HasSuffix(c.key, "imap.oauth2") && c.is.o.SMTP.Addr != "" {
			shared, r.SharedWith = " (smtp shares it)", "smtp"
		}
		out = append(out, r)
		if w != nil {
			fmt.Fprintf(w, "%s: access token obtained for %s from %s (%s grant), %s%s\n", c.key, c.user, r.TokenURL, r.Grant, valid, shared)
		}
	}
	return out, p.err()
}
