// What a model is sent of a customer's attachments.

package model

import (
	"fmt"
	"strings"
)

// Input kinds (Options.Inputs, the model.attachments setting).
const (
	InputImage = "image" // images, as image_url data URLs on Chat Completions
	InputPDF   = "pdf"   // PDFs, as file parts on Chat Completions
	InputNone  = "none"  // no attachment at all
)

// InputKinds lists the input kinds the setting accepts.
var InputKinds = []string{InputImage, InputPDF, InputNone}

// Inputs are the attachments an OpenAI-compatible endpoint reads: OpenAI's
// vision models read images and PDFs; a local server reads images only
// with a vision model (Ollama, llama.cpp with its projector) and PDFs not
// at all. What it does not read is listed to the model by name, never
// sent. Gemini reads every type the pipeline sends.
type Inputs struct {
	Images bool
	PDF    bool
}

// DefaultOpenAIInputs is what the OpenAI API reads.
var DefaultOpenAIInputs = Inputs{Images: true, PDF: true}

// ParseInputs reads the model.attachments setting: input kinds, none for
// no attachment; an empty list is DefaultOpenAIInputs.
func ParseInputs(kinds []string) (Inputs, error) {
	if len(kinds) == 0 {
		return DefaultOpenAIInputs, nil
	}
	var in Inputs
	none := false
	for _, k := range kinds {
		switch strings.ToLower(strings.TrimSpace(k)) {
		case InputImage:
			in.Images = true
		case InputPDF:
			in.PDF = true
		case InputNone:
			none = true
		default:
			return Inputs{}, fmt.Errorf("attachment kind %q: want %s", k, strings.Join(InputKinds, ", "))
		}
	}
	if none && (in.Images || in.PDF) {
		return Inputs{}, fmt.Errorf("attachment kinds %s: none goes alone", strings.Join(kinds, ","))
	}
	return in, nil
}

// Reads reports whether in takes an attachment of mediaType.
func (in Inputs) Reads(mediaType string) bool {
	mt := strings.ToLower(mediaType)
	return (in.Images && strings.HasPrefix(mt, "image/")) || (in.PDF && mt == "application/pdf")
}

// String is in as the setting writes it.
func (in Inputs) String() string {
	var k []string
	if in.Images {
		k = append(k, InputImage)
	}
	if in.PDF {
		k = append(k, InputPDF)
	}
	if len(k) == 0 {
		return InputNone
	}
	return strings.Join(k, ",")
}
