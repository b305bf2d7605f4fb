// Which attachments of an email the model may see: only allowed types
// (images and PDFs by default), at most MaxCount of them and MaxBytes in
// total, the largest left out first, each checked to really be what its
// type says. Everything else is listed by name only.

package processor

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"triage/internal/message"
)

// Defaults applied by AttachConfig.WithDefaults.
const (
	DefaultAttachMaxCount = 4
	DefaultAttachMaxBytes = 8 << 20 // well under Gemini's inline request limit
)

// DefaultAttachTypes are the media types Gemini reads natively that a warranty
// customer sends: photos of the serial plate, the receipt, the damage, and
// PDF invoices.
var DefaultAttachTypes = []string{"image/jpeg", "image/png", "image/webp", "image/heic", "application/pdf"}

// AttachConfig caps what the model is sent; zero fields get the defaults, a
// negative MaxCount sends nothing.
type AttachConfig struct {
	Types    []string // allowed media types (default DefaultAttachTypes)
	MaxCount int      // attachments sent at most (default DefaultAttachMaxCount)
	MaxBytes int      // bytes sent in total at most (default DefaultAttachMaxBytes)
	// ModelReads reports whether the model reads an attachment of a media
	// type (model.Model.Reads); nil: every allowed type.
	ModelReads func(mediaType string) bool
}

// WithDefaults returns c with its zero fields set.
func (c AttachConfig) WithDefaults() AttachConfig {
	if len(c.Types) == 0 {
		c.Types = DefaultAttachTypes
	}
	if c.MaxCount == 0 {
		c.MaxCount = DefaultAttachMaxCount
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultAttachMaxBytes
	}
	return c
}

// Why an attachment was not sent (AttachDecision.Why).
const (
	NotSentType     = "type_not_allowed" // not one of AttachConfig.Types
	NotSentEmpty    = "empty"
	NotSentCount    = "over_max_count"    // more than MaxCount allowed attachments; the largest went first
	NotSentBytes    = "over_max_bytes"    // the allowed ones were over MaxBytes together; the largest went first
	NotSentContent  = "content_mismatch"  // its bytes are not what its type says
	NotSentUnread   = "unreadable"        // its content could not be read
	NotSentDisabled = "disabled"          // AttachConfig.MaxCount < 0
	NotSentModel    = "model_cannot_read" // the model's endpoint does not read its type (AttachConfig.ModelReads)
)

// AttachDecision is what happened to one listed attachment.
type AttachDecision struct {
	Index int    `json:"-"` // in message.Message.Attachments
	Name  string `json:"name"`
	Type  string `json:"type"`
	Size  int    `json:"size"`
	Sent  bool   `json:"sent"`
	Why   string `json:"not_sent,omitempty"`
}

// planAttachments decides by name, type and size which of list may be sent: allowed
// types only, then the largest dropped until at most MaxCount remain and
// they hold at most MaxBytes. Attachments in excluded (by index, from
// sniffAttachments) are not sent, for the reason given. Sent is provisional until
// checkAttachments has seen the content.
func planAttachments(list []message.Attachment, cfg AttachConfig, excluded map[int]string) []AttachDecision {
	cfg = cfg.WithDefaults()
	out := make([]AttachDecision, len(list))
	var cand []int
	for i, a := range list {
		t := strings.ToLower(a.Type)
		out[i] = AttachDecision{Index: i, Name: a.Name, Type: t, Size: a.Size}
		switch {
		case excluded[i] != "":
			out[i].Why = excluded[i]
		case !slices.Contains(cfg.Types, t):
			out[i].Why = NotSentType
		case cfg.ModelReads != nil && !cfg.ModelReads(t):
			out[i].Why = NotSentModel
		case a.Size <= 0:
			out[i].Why = NotSentEmpty
		case cfg.MaxCount < 0:
			out[i].Why = NotSentDisabled
		default:
			out[i].Sent = true
			cand = append(cand, i)
		}
	}
	// Largest first; among equals, the later one goes first.
	sort.SliceStable(cand, func(x, y int) bool {
		a, b := out[cand[x]], out[cand[y]]
		if a.Size != b.Size {
			return a.Size > b.Size
		}
		return a.Index > b.Index
	})
	total := 0
	for _, i := range cand {
		total += out[i].Size
	}
	n := len(cand)
	for _, i := range cand {
		if n <= cfg.MaxCount && total <= cfg.MaxBytes {
			break
		}
		out[i].Sent = false
		out[i].Why = NotSentCount
		if total > cfg.MaxBytes {
			out[i].Why = NotSentBytes
		}
		n--
		total -= out[i].Size
	}
	return out
}

// sniffAttachments checks, before anything is planned, the first bytes of each
// listed attachment that planAttachments could send (heads, by index, as the parser
// kept them: message.Message.Heads): one whose bytes are not what its type
// says is excluded (NotSentContent) and never takes a place another could
// have. An attachment with no head is left to checkAttachments.
func sniffAttachments(list []message.Attachment, heads map[int][]byte, cfg AttachConfig) map[int]string {
	cfg = cfg.WithDefaults()
	excluded := map[int]string{}
	for i, a := range list {
		t := strings.ToLower(a.Type)
		if h, ok := heads[i]; ok && slices.Contains(cfg.Types, t) && !contentMatches(t, h) {
			excluded[i] = NotSentContent
		}
	}
	return excluded
}

// sentAttachments lists the indices of the decisions still to be sent.
func sentAttachments(ds []AttachDecision) []int {
	var out []int
	for _, d := range ds {
		if d.Sent {
			out = append(out, d.Index)
		}
	}
	return out
}

// checkAttachments confirms the content of each decision still to be sent: its bytes
// must be what its type says (a "photo" that is an executable, an archive
// or HTML is never sent). data holds the content by index; a missing entry
// is unreadable. sniffAttachments has already refused what the heads show, so a
// refusal here is rare and final: nothing is planned or read again.
func checkAttachments(ds []AttachDecision, data map[int][]byte) {
	for i := range ds {
		d := &ds[i]
		if !d.Sent {
			continue
		}
		b, ok := data[d.Index]
		switch {
		case !ok:
			d.Sent, d.Why = false, NotSentUnread
		case !contentMatches(d.Type, b):
			d.Sent, d.Why = false, NotSentContent
		default:
			continue
		}
	}
}

// contentMatches reports whether b looks like a file of media type t: the
// standard content sniffing for JPEG, PNG, WebP and PDF, and the ISO base
// media "ftyp" box with a HEIF brand for HEIC. It reads at most the first
// message.SniffBytes (512) of b, so a file's head answers as the file does.
func contentMatches(t string, b []byte) bool {
	if t == "image/heic" {
		return len(b) >= 12 && bytes.Equal(b[4:8], []byte("ftyp")) &&
			slices.Contains([]string{"heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1"}, string(b[8:12]))
	}
	sniffed, _, _ := strings.Cut(http.DetectContentType(b), ";")
	return sniffed == t
}

// attachmentsNote says in one line what was left out and why ("" when everything
// allowed was sent), for the trusted facts.
func attachmentsNote(ds []AttachDecision, cfg AttachConfig) string {
	cfg = cfg.WithDefaults()
	count := map[string]int{}
	for _, d := range ds {
		if !d.Sent {
			count[d.Why]++
		}
	}
	if len(count) == 0 {
		return ""
	}
	var parts []string
	for _, w := range []struct{ why, text string }{
		{NotSentType, "of a type the model is never sent"},
		{NotSentModel, "of a type this model's endpoint does not read"},
		{NotSentCount, fmt.Sprintf("over the %d attachments sent at most (the largest left out first)", cfg.MaxCount)},
		{NotSentBytes, fmt.Sprintf("over the %d bytes sent in total at most (the largest left out first)", cfg.MaxBytes)},
		{NotSentContent, "whose content is not what its type says"},
		{NotSentEmpty, "empty"},
		{NotSentUnread, "unreadable"},
		{NotSentDisabled, "not sent: attachments are not sent to the model here"},
	} {
		if n := count[w.why]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, w.text))
		}
	}
	return "Attachments not shown to you: " + strings.Join(parts, "; ") + "."
}
