package processor

import (
	"google.golang.org/genai"

	"triage/internal/attach"
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
// the inline parts for the first user turn.
func (p *Processor) attachments(raw []byte, listed []message.Attachment, out *Outcome, facts *prompt.Facts) ([]*genai.Part, error) {
	excluded := map[int]string{}
	var ds []attach.Decision
	var data map[int][]byte
	// An attachment whose content is not what its type says makes room for
	// another: plan again without it (a few rounds at most, each one parse).
	for round := 0; ; round++ {
		ds = attach.Plan(listed, p.cfg.Attachments, excluded)
		idx := attach.Sent(ds)
		if len(idx) == 0 {
			break
		}
		var err error
		data, err = message.AttachmentData(raw, p.cfg.HeaderLimits, idx, p.cfg.Attachments.WithDefaults().MaxBytes)
		if err != nil {
			return nil, err
		}
		if !attach.Check(ds, data, excluded) {
			break
		}
		if round == 2 {
			break // what Check refused stays refused; the rest is sent
		}
	}
	var parts []*genai.Part
	for _, d := range ds {
		if d.Sent {
			parts = append(parts, genai.NewPartFromBytes(data[d.Index], d.Type))
			facts.AttachmentsSeen = append(facts.AttachmentsSeen, d.Index)
		}
	}
	out.Attachments = infos(ds)
	facts.AttachmentsNote = attach.Note(ds, p.cfg.Attachments)
	return parts, nil
}

func infos(ds []attach.Decision) []AttachmentInfo {
	out := make([]AttachmentInfo, len(ds))
	for i, d := range ds {
		out[i] = AttachmentInfo{Name: d.Name, Type: d.Type, Size: d.Size, Sent: d.Sent, NotSent: d.Why}
	}
	return out
}
