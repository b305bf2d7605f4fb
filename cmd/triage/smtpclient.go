package main

import (
	"errors"
	"path/filepath"
	"strings"

	"triage/internal/clients/mail"
	"triage/internal/mailauth"
)

// smtpClient builds the SMTP client of the configuration's smtp section:
// its password or token (environment, file, literal), password mechanism,
// OAuth2 token source (oauth2Setup built it), CA file and timeout. Watch
// and the console both send through it, so a draft approved in the console
// leaves exactly as triage's own replies do. Problems go to p, named by
// their keys; nil when there are any.
func smtpClient(o *watchOptions, oauth2 *mailauth.Source, config string, p *problems) *mail.SMTP {
	pass, perr := secret("TRIAGE_SMTP_PASSWORD", o.SMTP.PasswordFile, o.SMTP.Password)
	if perr != nil {
		p.add("smtp.password_file: %v", errors.Unwrap(perr))
	}
	token, terr := secret("TRIAGE_SMTP_TOKEN", o.SMTP.TokenFile, o.SMTP.Token)
	if terr != nil {
		p.add("smtp.token_file: %v", errors.Unwrap(terr))
	}
	if perr == nil && terr == nil && o.SMTP.User != "" && pass == "" && token == "" && o.SMTP.OAuth2 == nil {
		p.add("no SMTP password or token for smtp.user %s: set TRIAGE_SMTP_PASSWORD (or TRIAGE_SMTP_TOKEN) in the environment (e.g. with --env-file FILE), or smtp.password_file in %s", o.SMTP.User, config)
	}
	tlsConfig, cerr := caConfig("smtp.ca_file", o.SMTP.CAFile)
	p.addErr(cerr)
	if perr != nil || terr != nil || cerr != nil {
		return nil
	}
	c, err := mail.NewSMTP(mail.SMTPConfig{Addr: o.SMTP.Addr, TLS: o.SMTP.TLS, Username: o.SMTP.User, Password: pass, Mechanism: o.SMTPMechanism,
		Token: token, OAuth2: oauth2, Timeout: o.SMTPTimeout, TLSConfig: tlsConfig, CASetting: "smtp.ca_file"})
	if err != nil {
		p.add("smtp: %v", strings.TrimPrefix(err.Error(), "mail: smtp: "))
		return nil
	}
	return c
}

// oauth2Relative makes the files the oauth2 blocks name relative to the
// configuration file at config, as every *_file setting is.
func oauth2Relative(o *watchOptions, config string) {
	for _, a := range []*mailauth.Setting{o.IMAP.OAuth2, o.SMTP.OAuth2} {
		if a == nil {
			continue
		}
		for _, f := range []*string{&a.ClientSecretFile, &a.RefreshTokenFile} {
			if *f != "" && !filepath.IsAbs(*f) {
				*f = filepath.Join(filepath.Dir(config), *f)
			}
		}
	}
}
