package watch

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"triage/internal/ledger"
	"triage/internal/testkit/mailtest"
	"triage/internal/trace"
)

// A message watch answers is one trace: the root span for the email
// (inbox, key, ledger state; the pipeline adds the outcome, see
// cmd/triage's TestProcessTraceTree) with the store claim, the IMAP fetch and the
// SMTP send under it; the ledger row keeps the trace id.
func TestWatchTraceTree(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	s := mailtest.StartIMAP(t, mailtest.IMAPOptions{})
	e := newEnv(t, s.Target())
	e.deliver(1, "klient@customer.example", "Gwarancja")
	e.runOnce(nil)

	entries, err := e.ledger.Recent(context.Background(), 10, "")
	if err != nil || len(entries) != 1 || entries[0].State != ledger.StateReplied {
		t.Fatalf("ledger %+v, %v; want one replied message", entries, err)
	}
	var root sdktrace.ReadOnlySpan
	children := map[string]bool{}
	for _, sp := range rec.Ended() {
		if sp.Name() == trace.EmailSpanName {
			root = sp
		}
	}
	if root == nil {
		t.Fatal("no email span")
	}
	if got := root.SpanContext().TraceID().String(); got != entries[0].TraceID {
		t.Errorf("ledger trace id %q, root span's %s", entries[0].TraceID, got)
	}
	for _, sp := range rec.Ended() {
		if sp.Parent().SpanID() == root.SpanContext().SpanID() {
			children[sp.Name()] = true
		}
	}
	for _, want := range []string{"store claim", "imap fetch", "smtp send"} {
		if !children[want] {
			t.Errorf("no %q span under the email's (children: %v)", want, children)
		}
	}
	attrs := map[string]string{}
	for _, a := range root.Attributes() {
		attrs[string(a.Key)] = a.Value.Emit()
	}
	if attrs["triage.inbox"] != e.watcher(nil).Account()+"/INBOX" || attrs["triage.key"] != string(entries[0].Key) ||
		attrs["triage.ledger.state"] != string(ledger.StateReplied) {
		t.Errorf("root attributes %v", attrs)
	}
}
