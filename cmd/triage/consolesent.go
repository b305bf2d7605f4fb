package main

import (
	"context"
	"errors"
	"log/slog"

	"triage"
	"triage/internal/console"
	"triage/internal/processor"
	"triage/internal/watch"
)

// noPipeline is the pipeline of a watcher that only reads the Sent folder
// (the console's check): it is never given a message.
type noPipeline struct{}

func (noPipeline) Process(_ context.Context, in processor.Input) processor.Outcome {
	return processor.Outcome{File: in.Name, Status: triage.StatusFailed, Reason: triage.ReasonReadError}
}

// consoleSent is the console's Sent folder look-up: a read-only watcher of
// the configuration's inbox (the same login, OAuth2 source, TLS and Sent
// folder as triage watch's). It is nil, with the reason logged, when the
// configuration has no imap section or its secrets are missing: the
// console then says it cannot check.
func consoleSent(wo *watchOptions, log *slog.Logger) console.SentFinder {
	if wo.IMAP.Addr == "" {
		return nil
	}
	ws := &watchSetup{o: wo}
	var p problems
	imapOAuth2Setup(wo, ws, &p)
	var err error
	ws.imapTLS, err = caConfig("imap.ca_file", wo.IMAP.CAFile)
	p.addErr(err)
	if ws.imapPass, err = wo.secretOf("TRIAGE_IMAP_PASSWORD", wo.IMAP.PasswordFile, wo.IMAP.Password); err != nil {
		p.add("imap.password_file: %v", errors.Unwrap(err))
	}
	if ws.imapToken, err = wo.secretOf("TRIAGE_IMAP_TOKEN", wo.IMAP.TokenFile, wo.IMAP.Token); err != nil {
		p.add("imap.token_file: %v", errors.Unwrap(err))
	}
	if ws.imapPass == "" && ws.imapToken == "" && wo.IMAP.OAuth2 == nil {
		p.add("no IMAP password or token (TRIAGE_IMAP_PASSWORD: --env-file /etc/triage/env)")
	}
	if err := p.err(); err != nil {
		log.Warn("console: the Sent folder cannot be checked", "err", err)
		return nil
	}
	w, err := watch.New(watch.Config{
		Addr: wo.IMAP.Addr, TLS: wo.IMAP.TLS, TLSConfig: ws.imapTLS, CASetting: "imap.ca_file",
		Username: wo.IMAP.User, Password: ws.imapPass, Token: ws.imapToken, OAuth2: ws.imapOAuth2,
		Account: wo.Account, Mailbox: wo.Mailbox, SentFolder: wo.SentFolder, DraftsFolder: wo.DraftsFolder,
		DryRun: true, Processor: noPipeline{}, Logger: log,
	})
	if err != nil {
		log.Warn("console: the Sent folder cannot be checked", "err", err)
		return nil
	}
	return w
}
