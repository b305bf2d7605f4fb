package mail

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestThreadReferences: the first ID and the last 20 valid ones are kept, in
// order, without duplicates; IDs that are not msg-ids are dropped.
func TestThreadReferences(t *testing.T) {
	var refs []string
	for i := range 100 {
		refs = append(refs, fmt.Sprintf("<r%d@example.pl>", i))
	}
	var want []string
	want = append(want, "<r0@example.pl>")
	for i := 81; i < 100; i++ {
		want = append(want, fmt.Sprintf("<r%d@example.pl>", i))
	}
	want = append(want, "<in@example.pl>")
	tests := []struct {
		name string
		refs []string
		id   string
		want []string
	}{
		{"short list kept", []string{"<a@x>", "<b@x>"}, "<c@x>", []string{"<a@x>", "<b@x>", "<c@x>"}},
		{"first and last 20", refs, "<in@example.pl>", want},
		{"duplicates and empties", []string{"<a@x>", "", "<a@x>", "<b@x>"}, "<b@x>", []string{"<a@x>", "<b@x>"}},
		{"invalid dropped", []string{"<a b@x>", "<no-at>", "<>", "<a@x>", "<x@y> <z@w>", "<a@" + strings.Repeat("x", 300) + ">", "<ok@[10.0.0.1]>"}, "<id with space@x>",
			[]string{"<a@x>", "<ok@[10.0.0.1]>"}},
		{"bare ids get brackets", []string{"a@x"}, "b@x", []string{"<a@x>", "<b@x>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ThreadReferences(tt.refs, tt.id)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestRenderHugeReferences: a reply to a message with 100k References (some
// invalid) and an In-Reply-To with a space renders, with the capped list and
// without the bad In-Reply-To.
func TestRenderHugeReferences(t *testing.T) {
	refs := make([]string, 100000)
	for i := range refs {
		refs[i] = fmt.Sprintf("<ref-%06d@example.pl>", i)
		if i%7 == 3 {
			refs[i] = fmt.Sprintf("<bad %d@example.pl>", i)
		}
	}
	r := &Reply{From: "Serwis <serwis@example.com>", To: "anna@example.pl", Subject: "Re: x", Body: "Dzień dobry",
		InReplyTo: "<id with space@example.pl>", References: append(refs, "<id with space@example.pl>"),
		MessageID: "<triage-1@example.com>", Date: time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)}
	raw, err := Render(r)
	if err != nil {
		t.Fatal(err)
	}
	p := parse(t, raw)
	if len(p.References) != 21 || p.References[0] != "ref-000000@example.pl" || p.References[20] != "ref-099999@example.pl" {
		t.Errorf("References = %d IDs %v", len(p.References), p.References)
	}
	if len(p.InReplyTo) != 0 {
		t.Errorf("In-Reply-To = %v, want none (the inbound Message-ID is not a msg-id)", p.InReplyTo)
	}
}

// BenchmarkRenderHugeReferences reports rendering speed with 100k References.
func BenchmarkRenderHugeReferences(b *testing.B) {
	refs := make([]string, 100000)
	for i := range refs {
		refs[i] = fmt.Sprintf("<ref-%06d@example.pl>", i)
	}
	for b.Loop() {
		r := &Reply{From: "serwis@example.com", To: "anna@example.pl", Subject: "Re: x", Body: "x", References: refs, MessageID: "<m@example.com>"}
		if _, err := Render(r); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRenderLongSubject: a model-written subject of 1 MB is cut to 998 bytes
// on a rune boundary instead of being folded for minutes (items 5 and 7).
func TestRenderLongSubject(t *testing.T) {
	r := &Reply{From: "serwis@example.com", To: "anna@example.pl", Subject: "Re: " + strings.Repeat("ż", 1<<19), Body: "x", MessageID: "<m@example.com>"}
	raw, err := Render(r)
	if err != nil {
		t.Fatal(err)
	}
	if got := parse(t, raw).Subject; len(got) > MaxSubjectBytes || !strings.HasPrefix(got, "Re: żż") {
		t.Errorf("subject of %d bytes", len(got))
	}
}
