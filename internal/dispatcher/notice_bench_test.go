package dispatcher_test

import (
	"net/mail"
	"strings"
	"testing"
	"time"

	"triage/internal/clients/tickets"
	"triage/internal/dispatcher"
	"triage/internal/message"
)

// BenchmarkStaffNotice composes the largest notice a stranger can cause: a
// 1 MiB text (the parser's cap per part) quoted up to its bound, a long
// quoted history, a ticket with 500 messages and the maximum of earlier
// replies. Its size is bounded whatever the input.
func BenchmarkStaffNotice(b *testing.B) {
	line := "Ekspres nie działa\r\u2028i przecieka, proszę o pilny kontakt. "
	st := &tickets.State{TicketID: "TKT-000001", Status: "open", CustomerEmail: "jan@example.com", CreatedAt: time.Now()}
	for i := range 500 {
		id := "<m" + strings.Repeat("x", i%50) + "@example.com>"
		st.Messages = append(st.Messages, tickets.Message{MessageID: id, Direction: tickets.Inbound, Subject: strings.Repeat("temat ", 100), At: time.Now()})
		st.Notes = append(st.Notes, tickets.Note{MessageID: id, Text: strings.Repeat(line, 100)})
	}
	var told []dispatcher.Told
	for range 5 {
		told = append(told, dispatcher.Told{MessageID: "<r@example.com>", Subject: "Re: x", Text: strings.Repeat(line, 2000)})
	}
	n := dispatcher.Notice{
		Escalates: true, Scenario: "escalation", TicketID: "TKT-000001", Ticket: st, Told: told,
		Msg: &message.Message{MessageID: "<in@example.com>", From: mail.Address{Name: "Jan", Address: "jan@example.com"}, ReplyTo: "jan@example.com",
			Subject: strings.Repeat("Skandal! ", 200), Text: strings.Repeat(line+"\n", (1<<20)/len(line)), Quoted: strings.Repeat("> "+line+"\n", 20000)},
		ModelSubject: "Eskalacja", ModelNote: strings.Repeat("x", 20000),
	}
	b.ReportAllocs()
	size := 0
	for b.Loop() {
		size = len(n.Body()) + len(n.Subject())
	}
	b.ReportMetric(float64(size), "notice-bytes")
}
