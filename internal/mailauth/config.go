// Package mailauth provides what triage logs in to mail servers with when
// they want OAuth2: access tokens that renew themselves (client-credentials
// grant, or refresh-token grant with rotated refresh tokens written back),
// and the SASL clients that carry them (XOAUTH2, OAUTHBEARER), chosen from
// what the server advertises. IMAP (internal/watch) and SMTP
// (internal/clients/mail) share it.
package mailauth

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// SecretEnv is the environment variable that holds the client secret when
// client_secret_file is not set.
const SecretEnv = "TRIAGE_OAUTH2_CLIENT_SECRET"

// Mechanisms for Config.Mechanism.
const (
	XOAUTH2     = "xoauth2"
	OAUTHBEARER = "oauthbearer"
)

// Config is the oauth2 block of a server section of the configuration.
// Without RefreshTokenFile the grant is client credentials (Microsoft 365
// app-only access); with it, the refresh-token grant (Gmail).
type Config struct {
	TokenURL         string   `yaml:"token_url"`
	ClientID         string   `yaml:"client_id"`
	ClientSecretFile string   `yaml:"client_secret_file"`
	Scopes           []string `yaml:"scopes"`
	RefreshTokenFile string   `yaml:"refresh_token_file"`
	Mechanism        string   `yaml:"mechanism"`
}

// Setting is what a server section's oauth2 key holds: a Config block, or
// the name of another server section whose token source it shares
// ("oauth2: imap" in the smtp section: one client, one refresh token).
type Setting struct {
	Config
	SameAs string // "imap" when the block is the scalar "imap"
}

// fields are the keys of an oauth2 block.
var fields = []string{"client_id", "client_secret_file", "mechanism", "refresh_token_file", "scopes", "token_url"}

// UnmarshalYAML accepts a block with exactly the keys of Config, or a
// server section's name.
func (s *Setting) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Value != "imap" {
			return fmt.Errorf("line %d: oauth2: %q: want a block (token_url, client_id, ...) or imap (share the imap section's token)", n.Line, n.Value)
		}
		s.SameAs = n.Value
		return nil
	case yaml.MappingNode:
		var errs []error
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; !slices.Contains(fields, k.Value) {
				errs = append(errs, fmt.Errorf("line %d: unknown field %q in oauth2; valid: %s", k.Line, k.Value, strings.Join(fields, ", ")))
			}
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
		if err := n.Decode(&s.Config); err != nil {
			return fmt.Errorf("line %d: oauth2: %v", n.Line, strings.TrimPrefix(err.Error(), "yaml: "))
		}
		return nil
	}
	return fmt.Errorf("line %d: oauth2: want a block (token_url, client_id, ...) or imap", n.Line)
}

// Check reports every problem of c, each naming its key under prefix (e.g.
// "imap.oauth2"). It reads nothing.
func (c *Config) Check(prefix string) []error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(prefix+"."+format, a...)) }
	if c.TokenURL == "" {
		add("token_url: missing (the provider's token endpoint, e.g. https://login.microsoftonline.com/TENANT/oauth2/v2.0/token)")
	} else if u, err := url.Parse(c.TokenURL); err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname()))) {
		add("token_url %q: want an https:// URL (http:// only on loopback)", c.TokenURL)
	}
	if c.ClientID == "" {
		add("client_id: missing (the application (client) id of the app registration or OAuth client)")
	}
	if len(c.Scopes) == 0 {
		add("scopes: missing (e.g. [https://outlook.office365.com/.default] or [https://mail.google.com/])")
	}
	switch strings.ToLower(c.Mechanism) {
	case "", XOAUTH2, OAUTHBEARER:
	default:
		add("mechanism %q: want xoauth2 or oauthbearer (or leave it out: what the server advertises)", c.Mechanism)
	}
	return errs
}

// Grant names the grant c uses.
func (c *Config) Grant() string {
	if c.RefreshTokenFile != "" {
		return "refresh token"
	}
	return "client credentials"
}
