package mailtest

// The Dovecot configuration StartDovecot writes: dovecot.conf, and with
// OAuth2 the oauth2 passdb's own file.

import (
	"bytes"
	"os"
	"path/filepath"
	"text/template"
)

func (d *Dovecot) writeConfig(userName, groupName string, port int) error {
	var b bytes.Buffer
	err := dovecot23Config.Execute(&b, map[string]any{
		"Dir":       d.Dir,
		"BaseDir":   d.baseDir,
		"Log":       d.LogPath,
		"User":      userName,
		"Group":     groupName,
		"MailUID":   d.mailUID,
		"MailGID":   d.mailGID,
		"Port":      port,
		"Passwd":    d.passwdPath,
		"MailRoot":  filepath.Join(d.Dir, "mail"),
		"Root":      d.root,
		"LoginUser": d.loginUser,
		"Greeting":  d.greeting,
		"OAuth2":    d.introspect != "",
	})
	if err != nil {
		return err
	}
	if d.introspect != "" {
		// Every token is introspected (no tokeninfo): active must be true
		// and username the user logging in.
		conf := "introspection_mode = post\nintrospection_url = " + d.introspect + "\n" +
			"force_introspection = yes\nusername_attribute = username\nactive_attribute = active\nactive_value = true\n"
		if err := os.WriteFile(filepath.Join(d.Dir, "dovecot-oauth2.conf.ext"), []byte(conf), 0o600); err != nil {
			return err
		}
	}
	return os.WriteFile(d.ConfigPath, b.Bytes(), 0o600)
}

// dovecot23Config is a complete Dovecot 2.3 configuration: nothing is read from
// /etc/dovecot. Chroots are off so that it also runs without root.
var dovecot23Config = template.Must(template.New("dovecot.conf").Parse(`# Written by mailtest.StartDovecot for one test.
base_dir = {{.BaseDir}}
state_dir = {{.Dir}}/state
instance_name = mailtest
log_path = {{.Log}}
info_log_path = {{.Log}}
debug_log_path = {{.Log}}
auth_verbose = yes
login_greeting = {{.Greeting}}

listen = 127.0.0.1
protocols = imap
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login{{if .OAuth2}} xoauth2 oauthbearer{{end}}
# Tests try wrong passwords; do not wait the default 2s after each failure.
auth_failure_delay = 0

default_internal_user = {{.User}}
default_internal_group = {{.Group}}
default_login_user = {{.LoginUser}}
first_valid_uid = {{.MailUID}}
last_valid_uid = {{.MailUID}}
first_valid_gid = {{.MailGID}}
last_valid_gid = {{.MailGID}}
mail_uid = {{.MailUID}}
mail_gid = {{.MailGID}}

mail_location = maildir:{{.MailRoot}}/%u
namespace inbox {
  inbox = yes
  # Special-use folders (RFC 6154) under names a client cannot guess; each
  # exists (and is listed) once a test creates it.
  mailbox "Sent Items" {
    special_use = \Sent
  }
  mailbox "Robocze" {
    special_use = \Drafts
  }
  mailbox "Podejrzane" {
    special_use = \Junk
  }
}
mailbox_idle_check_interval = 1 secs

passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {{.Passwd}}
{{- if .OAuth2}}
  mechanisms = plain login
{{- end}}
}
{{- if .OAuth2}}
passdb {
  driver = oauth2
  mechanisms = xoauth2 oauthbearer
  args = {{.Dir}}/dovecot-oauth2.conf.ext
}
{{- end}}
userdb {
  driver = passwd-file
  args = username_format=%u {{.Passwd}}
}

protocol imap {
  mail_max_userip_connections = 100
}

service imap-login {
{{- if not .Root}}
  chroot =
{{- end}}
  inet_listener imap {
    address = 127.0.0.1
    port = {{.Port}}
  }
  inet_listener imaps {
    port = 0
  }
}
{{- if not .Root}}
service auth-worker {
  user = {{.User}}
}
{{- end}}
{{- if or .OAuth2 (not .Root)}}
service anvil {
{{- if not .Root}}
  chroot =
{{- end}}
{{- if .OAuth2}}
  # No growing delay for an address with failed logins (the auth penalty):
  # OAuth2 tests refuse many tokens in a row.
  unix_listener anvil-auth-penalty {
    mode = 0
  }
{{- end}}
}
{{- end}}
{{- if not .Root}}
service ipc {
  chroot =
}
service old-stats {
  chroot =
}
service aggregator {
  chroot =
}
service director {
  chroot =
}
service imap-urlauth-login {
  chroot =
}
{{- end}}
`))
