package mail

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"triage"
	"triage/internal/mailauth"
	"triage/internal/trace"
)

// Password mechanisms for SMTPConfig.Mechanism.
const (
	MechPlain = "plain"
	MechLogin = "login" // the obsolete LOGIN, for servers that offer nothing else
)

// SMTPConfig configures an SMTP submission client.
type SMTPConfig struct {
	Addr     string // host:port, required
	Host     string // TLS server name; default: the host of Addr
	Username string // AUTH user; empty means no AUTH (unless Token or OAuth2 is set)
	Password string // AUTH PLAIN (or LOGIN) password
	// Mechanism is the password mechanism: MechPlain or MechLogin; ""
	// means PLAIN unless the server offers LOGIN and not PLAIN.
	Mechanism string
	Token     string // a fixed OAuth2 access token: AUTH XOAUTH2 or OAUTHBEARER instead of PLAIN
	// OAuth2 hands out access tokens that renew themselves: every dial
	// authenticates with one valid for a while yet. It takes precedence
	// over Token.
	OAuth2  *mailauth.Source
	TLS     string // TLSStartTLS (default; port 587), TLSImplicit (465) or TLSNone
	Timeout time.Duration
	// TLSConfig is cloned; its ServerName defaults to Host.
	TLSConfig *tls.Config
	// CASetting names the setting that trusts a private CA (e.g.
	// "smtp.ca_file"): an untrusted certificate's error says to use it.
	CASetting string
}

// SMTP is a Sender that submits each reply over its own SMTP connection:
// MAIL FROM the bare From address, RCPT TO the recipient, DATA the rendered
// message. Errors carry Temporary() true for 4xx replies and transport
// failures.
type SMTP struct {
	cfg SMTPConfig
}

var _ Sender = (*SMTP)(nil)

// DefaultSMTPTimeout bounds one SMTP submission when SMTPConfig.Timeout is
// unset.
const DefaultSMTPTimeout = 30 * time.Second

// NewSMTP checks cfg and applies defaults (TLS "starttls", Timeout
// DefaultSMTPTimeout).
func NewSMTP(cfg SMTPConfig) (*SMTP, error) {
	if cfg.Addr == "" {
		return nil, errors.New("mail: smtp: Addr is required")
	}
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("mail: smtp: Addr %q: %w", cfg.Addr, err)
	}
	if cfg.Host == "" {
		cfg.Host = host
	}
	if cfg.TLS == "" {
		cfg.TLS = TLSStartTLS
	}
	if err := CheckTLS(cfg.TLS, host, TLSStartTLS); err != nil {
		return nil, fmt.Errorf("mail: smtp: %w", err)
	}
	switch cfg.Mechanism {
	case "", MechPlain, MechLogin:
	default:
		return nil, fmt.Errorf("mail: smtp: mechanism %q: want %s or %s", cfg.Mechanism, MechPlain, MechLogin)
	}
	if cfg.Password != "" && cfg.Username == "" {
		return nil, errors.New("mail: smtp: Password set without Username")
	}
	if cfg.OAuth2 == nil && cfg.Token != "" {
		cfg.OAuth2 = mailauth.Static(cfg.Token, "")
	}
	if cfg.OAuth2 != nil && cfg.Username == "" {
		return nil, errors.New("mail: smtp: an OAuth2 token needs Username (the mailbox it is for)")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultSMTPTimeout
	}
	if cfg.TLSConfig == nil {
		cfg.TLSConfig = &tls.Config{}
	} else {
		cfg.TLSConfig = cfg.TLSConfig.Clone()
	}
	if cfg.TLSConfig.ServerName == "" {
		cfg.TLSConfig.ServerName = cfg.Host
	}
	return &SMTP{cfg: cfg}, nil
}

// SMTPError is a failed submission; Temporary says whether a retry may help.
type SMTPError struct {
	Op        string // render, dial, tls, starttls, auth, mail, rcpt, data
	Err       error
	temporary bool
}

func (e *SMTPError) Error() string   { return "mail: smtp: " + e.Op + ": " + e.Err.Error() }
func (e *SMTPError) Unwrap() error   { return e.Err }
func (e *SMTPError) Temporary() bool { return e.temporary }

// NotSubmitted reports whether err proves the server did not accept the
// message (so submitting it again is safe): a failure before DATA, or an
// SMTP reply code refusing the DATA. A transport failure during or after
// DATA is ambiguous and reports false.
func NotSubmitted(err error) bool {
	var se *SMTPError
	if !errors.As(err, &se) {
		return false
	}
	switch se.Op {
	case "dial", "tls", "starttls", "auth", "mail", "rcpt", "render":
		return true
	case "data":
		var code *smtp.SMTPError
		return errors.As(err, &code)
	}
	return false
}

// Reply is the server's reply code and text (enhanced status code first,
// when it gave one); code 0 when the failure was not a server reply (the
// connection, TLS, a token).
func (e *SMTPError) Reply() (code int, text string) {
	var se *smtp.SMTPError
	if !errors.As(e.Err, &se) {
		return 0, ""
	}
	text = se.Message
	if ec := se.EnhancedCode; ec != smtp.NoEnhancedCode && ec != (smtp.EnhancedCode{}) {
		text = fmt.Sprintf("%d.%d.%d %s", ec[0], ec[1], ec[2], text)
	}
	return se.Code, text
}

// Delivery reports whether the reply could not be handed to the server
// (any failure but a reply that could not be rendered).
func (e *SMTPError) Delivery() bool { return e.Op != "render" }

// Undelivered describes a failed delivery (triage.Undelivered): the step,
// the server's reply code and text, or the transport error's text when the
// server gave no reply; ok is false for a reply that could not be rendered.
func (e *SMTPError) Undelivered() (triage.DeliveryFailure, bool) {
	if !e.Delivery() {
		return triage.DeliveryFailure{}, false
	}
	f := triage.DeliveryFailure{Step: e.Op, Temporary: e.Temporary()}
	f.Code, f.Text = e.Reply()
	if f.Code == 0 {
		f.Text = e.Err.Error()
	}
	return f, true
}

var _ triage.Undelivered = (*SMTPError)(nil)

func smtpErr(op string, err error) error {
	return &SMTPError{Op: op, Err: err, temporary: isTemporary(err)}
}

// isTemporary: 4xx replies, timeouts and transport failures are temporary;
// 5xx replies, certificate problems and cancellation are not.
func isTemporary(err error) bool {
	var te *mailauth.TokenError
	if errors.As(err, &te) {
		return !te.Permanent()
	}
	var se *smtp.SMTPError
	if errors.As(err, &se) {
		return se.Code/100 == 4
	}
	var cve *tls.CertificateVerificationError
	var uae x509.UnknownAuthorityError
	var hne x509.HostnameError
	var cie x509.CertificateInvalidError
	if errors.As(err, &cve) || errors.As(err, &uae) || errors.As(err, &hne) || errors.As(err, &cie) {
		return false
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// Send renders r and submits it.
func (s *SMTP) Send(ctx context.Context, r *Reply) (_ triage.Receipt, err error) {
	ctx, span := trace.StartClient(ctx, "smtp send", semconv.ServerAddress(s.cfg.Host))
	defer func() { trace.End(span, err) }()
	raw, err := Render(r)
	if err != nil {
		return triage.Receipt{}, &SMTPError{Op: "render", Err: err}
	}
	from, err := bareAddress("From", r.From)
	if err != nil {
		return triage.Receipt{}, &SMTPError{Op: "render", Err: err}
	}
	to, err := parseOne("To", r.To)
	if err != nil {
		return triage.Receipt{}, &SMTPError{Op: "render", Err: err}
	}

	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	d := net.Dialer{}
	conn, err := d.DialContext(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return triage.Receipt{}, smtpErr("dial", err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	// Unblock any pending read or write when ctx ends.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	wrap := func(op string, err error) error {
		if isTLSFailure(err) {
			// After STARTTLS the handshake runs lazily, at the next command.
			op = "starttls"
		}
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", err, ctx.Err())
		}
		if hint := UntrustedHint(err, s.cfg.Host, s.cfg.CASetting); hint != "" {
			err = fmt.Errorf("%w (%s)", err, hint)
		}
		return smtpErr(op, err)
	}

	var c *smtp.Client
	switch s.cfg.TLS {
	case TLSImplicit:
		tc := tls.Client(conn, s.cfg.TLSConfig)
		if err := tc.HandshakeContext(ctx); err != nil {
			return triage.Receipt{}, wrap("tls", err)
		}
		c = smtp.NewClient(tc)
	case TLSStartTLS:
		c, err = smtp.NewClientStartTLS(conn, s.cfg.TLSConfig)
		if err != nil {
			return triage.Receipt{}, wrap("starttls", err)
		}
	default:
		c = smtp.NewClient(conn)
	}
	defer c.Close()

	switch {
	case s.cfg.OAuth2 != nil:
		if err := s.oauth2(c); err != nil {
			return triage.Receipt{}, wrap("auth", err)
		}
	case s.cfg.Username != "":
		if err := c.Auth(s.passwordClient(c)); err != nil {
			return triage.Receipt{}, wrap("auth", err)
		}
	}
	var mopts *smtp.MailOptions
	if !isASCII(from) || !isASCII(to.Address) {
		mopts = &smtp.MailOptions{UTF8: true}
	}
	if err := c.Mail(from, mopts); err != nil {
		return triage.Receipt{}, wrap("mail", err)
	}
	if err := c.Rcpt(to.Address, nil); err != nil {
		return triage.Receipt{}, wrap("rcpt", err)
	}
	w, err := c.Data()
	if err != nil {
		return triage.Receipt{}, wrap("data", err)
	}
	if _, err := io.Copy(w, bytes.NewReader(raw)); err != nil {
		return triage.Receipt{}, wrap("data", err)
	}
	if err := w.Close(); err != nil {
		return triage.Receipt{}, wrap("data", err)
	}
	_ = c.Quit() // the message is accepted; a failed QUIT changes nothing
	return triage.Receipt{MessageID: r.MessageID, To: to.Address}, nil
}

// passwordClient is AUTH PLAIN, or LOGIN when configured or when the
// server offers LOGIN and not PLAIN.
func (s *SMTP) passwordClient(c *smtp.Client) sasl.Client {
	mech := s.cfg.Mechanism
	if mech == "" {
		_, offered := c.Extension("AUTH")
		var plain, login bool
		for _, m := range strings.Fields(offered) {
			plain = plain || strings.EqualFold(m, sasl.Plain)
			login = login || strings.EqualFold(m, sasl.Login)
		}
		if login && !plain {
			mech = MechLogin
		}
	}
	if mech == MechLogin {
		return sasl.NewLoginClient(s.cfg.Username, s.cfg.Password)
	}
	return sasl.NewPlainClient("", s.cfg.Username, s.cfg.Password)
}

// oauth2 authenticates with an access token from the configured source,
// the mechanism chosen from the EHLO AUTH line unless configured.
func (s *SMTP) oauth2(c *smtp.Client) error {
	_, offered := c.Extension("AUTH")
	host, p, _ := net.SplitHostPort(s.cfg.Addr)
	port, _ := strconv.Atoi(p)
	_, err := s.cfg.OAuth2.Login(mailauth.Server{
		User: s.cfg.Username, Offered: strings.Fields(offered), Host: host, Port: port,
		Auth: c.Auth,
		Refused: func(err error) bool {
			var se *smtp.SMTPError
			return errors.As(err, &se) && (se.Code == 535 || se.Code == 534)
		},
	})
	return err
}

// IsLoopback reports whether host is "localhost" or a loopback IP: the only
// hosts where a plain-text connection (TLS "none") is allowed.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// UntrustedHint says what to do about a server certificate that did not
// verify ("" for any other error): name host, and the setting that trusts a
// private CA.
func UntrustedHint(err error, host, setting string) string {
	var uae x509.UnknownAuthorityError
	var cve *tls.CertificateVerificationError
	if !errors.As(err, &uae) && !errors.As(err, &cve) {
		return ""
	}
	if setting == "" {
		return "the certificate of " + host + " is not trusted"
	}
	return "the certificate of " + host + " is not trusted: for a private CA, set " + setting + " to its PEM file"
}

// isTLSFailure reports whether err comes from a TLS handshake: a certificate
// that does not verify, or an alert or garbage from the peer.
func isTLSFailure(err error) bool {
	var cv *tls.CertificateVerificationError
	var ae tls.AlertError
	var rh tls.RecordHeaderError
	return errors.As(err, &cv) || errors.As(err, &ae) || errors.As(err, &rh)
}
