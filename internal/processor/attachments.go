package processor

import (
	"strings"

	"google.golang.org/genai"

	"triage/internal/dispatcher"
	"triage/internal/message"
	"triage/internal/prompt"
)

// Caps on the lists an email puts in the prompt and the outcome: a stranger
// can attach 10,000 files or write 87,000 serial-like tokens; the rest is
// counted (Outcome.AttachmentsOmitted, Outcome.SerialsOmitted).
const (
	MaxSerialsListed     = 20
	MaxAttachmentsListed = 20
)

// SerialSourceAttachment marks a serial the model read from an attachment
// (Outcome.SerialSource): the customer did not write it.
const SerialSourceAttachment = dispatcher.SerialSourceAttachment

// capList returns the first n of list and how many were left out.
func capList[T any](list []T, n int) ([]T, int) {
	if len(list) <= n {
		return list, 0
	}
	return list[:n], len(list) - n
}

// attachments decides which of the listed attachments the model is sent,
// reads them from raw, fills the outcome's list and the facts, and returns
// the inline parts for the first user turn. heads are the first bytes of
// each listed attachment of an allowed type, kept by the parse
// (message.Message.Heads): a content mismatch is known before the plan, so
// raw is parsed once more at most, for the content of what is sent.
func (p *Processor) attachments(raw []byte, listed []message.Attachment, heads map[int][]byte, out *Outcome, facts *prompt.Facts) ([]*genai.Part, error) {
	cfg := p.cfg.Attachments
	excluded := sniffAttachments(listed, heads, cfg)
	ds := planAttachments(listed, cfg, excluded)
	var data map[int][]byte
	if idx := sentAttachments(ds); len(idx) > 0 {
		var err error
		want := make(map[int]int, len(idx))
		for _, i := range idx {
			want[i] = listed[i].Size
		}
		data, err = message.AttachmentData(raw, p.cfg.HeaderLimits, want, cfg.WithDefaults().MaxBytes)
		if err != nil {
			return nil, err
		}
		// What checkAttachments refuses now stays refused; the rest is sent.
		checkAttachments(ds, data)
	}
	var parts []*genai.Part
	for _, d := range ds {
		if d.Sent {
			parts = append(parts, genai.NewPartFromBytes(data[d.Index], d.Type))
			facts.AttachmentsSeen = append(facts.AttachmentsSeen, d.Index)
		}
	}
	out.Attachments = infos(ds)
	facts.AttachmentsNote = attachmentsNote(ds, p.cfg.Attachments)
	return parts, nil
}

// sniffTypes are the media types whose first bytes the parse keeps
// (message.Limits.SniffTypes): those the model may be sent.
func sniffTypes(c AttachConfig) []string {
	if c.MaxCount < 0 {
		return nil
	}
	var out []string
	for _, t := range c.WithDefaults().Types {
		out = append(out, strings.ToLower(t))
	}
	return out
}

func infos(ds []AttachDecision) []AttachmentInfo {
	out := make([]AttachmentInfo, len(ds))
	for i, d := range ds {
		out[i] = AttachmentInfo{Name: d.Name, Type: d.Type, Size: d.Size, Sent: d.Sent, NotSent: d.Why}
	}
	return out
}
