package mail

import "fmt"

// Connection security modes of a mail server connection (SMTPConfig.TLS,
// and the IMAP connection of package watch).
const (
	TLSStartTLS = "starttls" // plain connect, then STARTTLS
	TLSImplicit = "tls"      // TLS from the first byte
	TLSNone     = "none"     // no TLS: allowed only for loopback hosts
)

// CheckTLS checks the connection security mode of a server at host: tls,
// starttls, or none for a loopback host only; "" is valid (the caller's
// default, def, which the message lists first). host "" checks the mode
// alone.
func CheckTLS(mode, host, def string) error {
	switch mode {
	case "", TLSImplicit, TLSStartTLS:
		return nil
	case TLSNone:
		if host != "" && !IsLoopback(host) {
			return fmt.Errorf("TLS %q is allowed only for loopback hosts, not %q", TLSNone, host)
		}
		return nil
	}
	first, second := TLSImplicit, TLSStartTLS
	if def == TLSStartTLS {
		first, second = second, first
	}
	return fmt.Errorf("TLS %q: want %s, %s or %s", mode, first, second, TLSNone)
}
