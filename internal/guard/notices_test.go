package guard

import (
	"net/mail"
	"testing"

	"triage"
	"triage/internal/message"
)

// TestMachineNotices: machine mail with no RFC 3834 header, known by its
// structure and headers, and the people's mail that looks like it.
func TestMachineNotices(t *testing.T) {
	rfc822 := []message.Attachment{{Type: "message/rfc822"}}
	tnef := []message.Attachment{{Name: "winmail.dat", Type: "application/ms-tnef"}}
	received := []string{"from smtp.example.org by mail.example.com"}
	tests := []struct {
		name string
		m    message.Message
		want triage.Reason // "" when answered
	}{
		{"hotmail complaint", message.Message{Subject: "complaint about message from 192.0.2.1", Attachments: rfc822}, triage.ReasonFeedbackReport},
		{"complaint subject with a photo", message.Message{Subject: "Complaint about message from the shop", Attachments: []message.Attachment{{Type: "image/jpeg"}}}, ""},
		{"complaint subject, two messages attached", message.Message{Subject: "complaint about message from 192.0.2.1", Attachments: append(rfc822, rfc822...)}, ""},
		{"outlook read receipt", message.Message{Subject: "Read: Re: Reklamacja", Attachments: tnef}, triage.ReasonReadReceipt},
		{"german read receipt by correlator", message.Message{Subject: "Gelesen: Garantie", Header: map[string][]string{"X-Ms-Tnef-Correlator": {"<a@b>"}}}, triage.ReasonReadReceipt},
		{"read subject without TNEF", message.Message{Subject: "Read: the manual does not help"}, ""},
		{"TNEF without a read subject", message.Message{Subject: "Reklamacja", Attachments: tnef}, ""},
		{"RT header", message.Message{Subject: "Re: Reklamacja", Header: map[string][]string{"Rt-Ticket": {"rt.example.org #1"}}}, triage.ReasonTicketSystem},
		{"RT managed-by", message.Message{Subject: "x", Header: map[string][]string{"Managed-By": {"RT 5.0.3 (http://www.bestpractical.com/rt/)"}}}, triage.ReasonTicketSystem},
		{"RT autoreply subject", message.Message{Subject: "[helpdesk #33575] AutoReply: Warranty"}, triage.ReasonTicketSystem},
		{"RT resolved subject", message.Message{Subject: "[rt.example.org #7] Resolved: Re: Warranty"}, triage.ReasonTicketSystem},
		{"a person replying on an RT ticket", message.Message{Subject: "Re: [rt.example.org #7] Resolved: Re: Warranty"}, ""},
		{"a person's ticket number", message.Message{Subject: "[order #33575] blender broken"}, ""},
		{"managed by a person", message.Message{Subject: "x", Header: map[string][]string{"Managed-By": {"Jan Kowalski"}}}, ""},
		{"mlmmj owner", message.Message{From: mail.Address{Address: "coffee+owner@lists.example.org"}}, triage.ReasonListManager},
		{"mlmmj confirm", message.Message{From: mail.Address{Address: "coffee+confsub-abc@lists.example.org"}}, triage.ReasonListManager},
		{"a person's subaddress", message.Message{From: mail.Address{Address: "maria+shop@example.org"}}, ""},
		{"-owner sender", message.Message{From: mail.Address{Address: "coffee-owner@lists.example.org"}}, triage.ReasonNoReplySender},
		{"feed2imap: From is To, not delivered", message.Message{From: mail.Address{Address: "feeds@home.example.org"}, To: []string{"FEEDS@home.example.org"}}, triage.ReasonFeed},
		{"a person writing to themselves", message.Message{From: mail.Address{Address: "ewa@example.org"}, To: []string{"ewa@example.org"}, Header: map[string][]string{"Received": received}}, ""},
		{"From is one of several To", message.Message{From: mail.Address{Address: "ewa@example.org"}, To: []string{"ewa@example.org", "serwis@example.com"}}, ""},
		{"rss2email", message.Message{Subject: "Review", Header: map[string][]string{"X-Rss-Feed": {"https://x.example.org/feed"}, "Received": received}}, triage.ReasonFeed},
		{"feedback id is no feed", message.Message{Subject: "Review", Header: map[string][]string{"X-Feedback-Id": {"123:abc"}}}, ""},
		{"calendar request", message.Message{Subject: "Invitation: visit", CalendarMethod: "REQUEST"}, triage.ReasonCalendar},
		{"calendar cancel", message.Message{Subject: "Canceled event: visit", CalendarMethod: "CANCEL"}, triage.ReasonCalendar},
		{"bounce by display name", message.Message{From: mail.Address{Name: "Mail Delivery Subsystem", Address: "postfix@mx.example.net"}}, triage.ReasonBounce},
		{"bounce by NDR name", message.Message{From: mail.Address{Name: "NDR Service", Address: "x@mx.example.net"}}, triage.ReasonBounce},
		{"Alexandra is no NDR", message.Message{From: mail.Address{Name: "Alexandra Undry", Address: "alexandra@example.org"}}, ""},
		{"bounce subject returning a message", message.Message{From: mail.Address{Address: "jan@firma.example.org"}, Subject: "Undeliverable: Re: Reklamacja", Attachments: rfc822}, triage.ReasonBounce},
		{"bounce subject returning headers", message.Message{From: mail.Address{Address: "jan@firma.example.org"}, Subject: "Returned mail: User unknown", Attachments: []message.Attachment{{Type: "text/rfc822-headers"}}}, triage.ReasonBounce},
		{"a courier's delivery failure", message.Message{From: mail.Address{Address: "anna@example.org"}, Subject: "Delivery failure: my blender never arrived"}, ""},
		{"exchange system sender", message.Message{From: mail.Address{Name: "Microsoft Outlook", Address: "MicrosoftExchange329e71ec88ae4615bbc36ab6ce41109e@firma.example.org"}}, triage.ReasonNoReplySender},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.m
			if m.From.Address == "" {
				m.From.Address = "anna@example.pl"
			}
			if m.Header == nil {
				m.Header = map[string][]string{}
			}
			v := Check(cfg, &m)
			if v.Skip != (tt.want != "") || v.Reason != tt.want {
				t.Errorf("verdict %+v, want reason %q", v, tt.want)
			}
		})
	}
}
