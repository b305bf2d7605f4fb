package watch

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/google/go-cmp/cmp"

	"triage"
	"triage/internal/ledger"

	"triage/internal/message"
	"triage/internal/testkit/mailtest"
)

// headerOnly is a message whose header is about size bytes of filler
// fields after its From, Message-ID and Subject, with a one-line body.
func headerOnly(id string, size int) string {
	var b strings.Builder
	b.WriteString("From: Anna <anna@customer.example>\r\nMessage-ID: <" + id + "@customer.example>\r\nSubject: x\r\n")
	for b.Len() < size {
		b.WriteString("X-Filler: " + strings.Repeat("a", 990) + "\r\n")
	}
	b.WriteString("\r\nbody\r\n")
	return b.String()
}

// meteredConn counts what the client reads from the server and keeps what
// it writes (the commands).
type meteredConn struct {
	net.Conn
	mu   sync.Mutex
	read int
	sent strings.Builder
}

func (c *meteredConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.read += n
	c.mu.Unlock()
	return n, err
}

func (c *meteredConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.sent.Write(p)
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// reset returns what was read and sent since the last reset.
func (c *meteredConn) reset() (int, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, s := c.read, c.sent.String()
	c.read = 0
	c.sent.Reset()
	return n, s
}

// meteredClient logs in to the server at addr over a metered connection.
func meteredClient(t testing.TB, addr, user, password string) (*imapclient.Client, *meteredConn) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	mc := &meteredConn{Conn: conn}
	c := imapclient.New(mc, nil)
	t.Cleanup(func() { c.Close() })
	if err := c.Login(user, password).Wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Select("INBOX", nil).Wait(); err != nil {
		t.Fatal(err)
	}
	return c, mc
}

// A header-only message within the size limit: its header fetch is
// bounded (one byte over message.DefaultMaxHeaderBytes, so the parser
// still sees that it is too large), after its size.
func TestHeaderFetchIsBounded(t *testing.T) {
	srv := mailtest.StartIMAP(t, mailtest.IMAPOptions{})
	raw := headerOnly("huge-header", 3<<20)
	uid := srv.Append(t, "INBOX", []byte(raw))
	c := srv.Client(t)
	if _, err := c.Select("INBOX", nil).Wait(); err != nil {
		t.Fatal(err)
	}
	hdr, size, ok, err := fetchHead(c, uid, DefaultMaxMessageBytes)
	if err != nil || !ok {
		t.Fatalf("fetchHead: ok %v, %v", ok, err)
	}
	if size != int64(len(raw)) {
		t.Errorf("size %d, want %d", size, len(raw))
	}
	if len(hdr) != message.DefaultMaxHeaderBytes+1 {
		t.Errorf("fetched %d bytes of header, want %d", len(hdr), message.DefaultMaxHeaderBytes+1)
	}
	if id := identify(hdr); id.MessageID != "<huge-header@customer.example>" || id.From != "anna@customer.example" {
		t.Errorf("identity from the bounded header: %+v", id)
	}
}

// A message over the size limit is sized first and never has its header
// fetched: only its first bytes are read, enough to name it in the ledger,
// however large its header is.
func TestOversizeHeaderNotFetched(t *testing.T) {
	srv := mailtest.StartIMAP(t, mailtest.IMAPOptions{})
	raw := headerOnly("oversize", 8<<20)
	uid := srv.Append(t, "INBOX", []byte(raw))
	c, mc := meteredClient(t, srv.Addr, srv.User, srv.Password)
	mc.reset()
	hdr, size, ok, err := fetchHead(c, uid, 1<<20)
	if err != nil || !ok || size != int64(len(raw)) {
		t.Fatalf("fetchHead: size %d, ok %v, %v; want %d", size, ok, err, len(raw))
	}
	read, sent := mc.reset()
	if read > maxOversizeFetch+4<<10 {
		t.Errorf("the client read %d bytes for a message over the limit, want at most %d and the responses' framing", read, maxOversizeFetch)
	}
	if strings.Contains(sent, "HEADER") {
		t.Errorf("the header of a message over the limit was fetched:\n%s", sent)
	}
	if i, j := strings.Index(sent, "RFC822.SIZE"), strings.Index(sent, "BODY.PEEK[]"); i < 0 || j < 0 || i > j {
		t.Errorf("the size was not fetched alone first:\n%s", sent)
	}
	if id := identify(hdr); id.MessageID != "<oversize@customer.example>" || id.From != "anna@customer.example" {
		t.Errorf("identity from the first bytes: %+v", id)
	}
}

// A message over max_message_bytes goes to a person unread: failed,
// too_large, named in the ledger by the first bytes read of it, never
// given to the pipeline.
func TestOversizeMessageLeftUnread(t *testing.T) {
	srv := mailtest.StartIMAP(t, mailtest.IMAPOptions{})
	e := newEnv(t, srv.Target())
	srv.Append(t, "INBOX", []byte(headerOnly("too-big", 2<<20)))
	w := e.runOnce(func(c *Config) { c.MaxMessageBytes = 1 << 20 })
	if diff := cmp.Diff(map[ledger.State]int{ledger.StateFailed: 1}, w.Stats().ByState); diff != "" {
		t.Errorf("final states (-want +got):\n%s", diff)
	}
	if e.proc.Calls() != 0 {
		t.Errorf("the pipeline was given %d message(s)", e.proc.Calls())
	}
	failed, err := e.ledger.Recent(context.Background(), 10, ledger.StateFailed)
	if err != nil {
		t.Fatal(err)
	}
	if len(failed) != 1 || failed[0].Reason != triage.ReasonTooLarge || failed[0].MessageID != "<too-big@customer.example>" ||
		failed[0].Sender != "anna@customer.example" {
		t.Errorf("failed entries = %+v, want the message too_large, named by its Message-ID and sender", failed)
	}
}

// BenchmarkOversizeHeaderFetch: what triage reads of a 60 MB header-only
// message over the size limit (its identity for the ledger), from the
// in-memory server (whose own parse of the header is in the time) and from
// Dovecot (skipped when it is not installed).
func BenchmarkOversizeHeaderFetch(b *testing.B) {
	raw := []byte(headerOnly("bench", 60<<20))
	run := func(b *testing.B, addr, user, password string, uid imap.UID) {
		c, mc := meteredClient(b, addr, user, password)
		mc.reset()
		b.ResetTimer()
		for range b.N {
			if _, _, ok, err := fetchHead(c, uid, DefaultMaxMessageBytes); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
		read, _ := mc.reset()
		b.ReportMetric(float64(read)/float64(b.N), "client-bytes/op")
	}
	b.Run("imapmem", func(b *testing.B) {
		srv := mailtest.StartIMAP(b, mailtest.IMAPOptions{})
		run(b, srv.Addr, srv.User, srv.Password, srv.Append(b, "INBOX", raw))
	})
	b.Run("dovecot", func(b *testing.B) {
		d := mailtest.StartDovecot(b)
		run(b, d.Addr, d.User, d.Password, d.Append(b, "INBOX", raw))
	})
}
