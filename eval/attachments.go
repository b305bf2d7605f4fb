package eval

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"strings"

	gomail "github.com/emersion/go-message/mail"
)

// Attachment is one input.email.attachments item: a file, relative to the
// case file, attached with its content type.
type Attachment struct {
	Path        string `yaml:"path" json:"path"`
	ContentType string `yaml:"content_type" json:"content_type"`

	data []byte // the file, read when the case is loaded
}

// loadAttachments reads the attachments of e from dir (the case file's
// directory); it returns one problem per attachment that cannot be used.
func loadAttachments(e *Email, dir string) []string {
	var probs []string
	for i := range e.Attachments {
		a := &e.Attachments[i]
		if strings.TrimSpace(a.Path) == "" {
			probs = append(probs, fmt.Sprintf("input.email.attachments[%d].path is required", i))
			continue
		}
		if _, _, err := mime.ParseMediaType(a.ContentType); err != nil || !strings.Contains(a.ContentType, "/") {
			probs = append(probs, fmt.Sprintf("input.email.attachments[%d].content_type %q: want a media type such as image/jpeg", i, a.ContentType))
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, a.Path))
		if err != nil {
			probs = append(probs, fmt.Sprintf("input.email.attachments[%d].path: %v", i, err))
			continue
		}
		a.data = b
	}
	return probs
}

// renderMultipart writes a multipart/mixed message: the text part, then
// each attachment (base64, with its file name).
func renderMultipart(id string, h gomail.Header, body string, atts []Attachment) ([]byte, error) {
	h.Del("Content-Type")
	var buf bytes.Buffer
	mw, err := gomail.CreateWriter(&buf, h)
	if err != nil {
		return nil, fmt.Errorf("eval: render %s: %w", id, err)
	}
	var th gomail.InlineHeader
	th.SetContentType("text/plain", map[string]string{"charset": "utf-8"})
	tw, err := mw.CreateSingleInline(th)
	if err != nil {
		return nil, fmt.Errorf("eval: render %s: %w", id, err)
	}
	if _, err := io.WriteString(tw, body); err != nil {
		return nil, fmt.Errorf("eval: render %s: %w", id, err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("eval: render %s: %w", id, err)
	}
	for _, a := range atts {
		var ah gomail.AttachmentHeader
		t, params, _ := mime.ParseMediaType(a.ContentType)
		ah.SetContentType(t, params)
		ah.SetFilename(filepath.Base(a.Path))
		aw, err := mw.CreateAttachment(ah)
		if err != nil {
			return nil, fmt.Errorf("eval: render %s: %w", id, err)
		}
		if _, err := aw.Write(a.data); err != nil {
			return nil, fmt.Errorf("eval: render %s: %w", id, err)
		}
		if err := aw.Close(); err != nil {
			return nil, fmt.Errorf("eval: render %s: %w", id, err)
		}
	}
	if err := mw.Close(); err != nil {
		return nil, fmt.Errorf("eval: render %s: %w", id, err)
	}
	return buf.Bytes(), nil
}
