package agent

import (
	"context"
	"reflect"

	"google.golang.org/genai"
)

// Gemini adapts *genai.Client to Model.
type Gemini struct {
	Client *genai.Client
}

var _ Model = (*Gemini)(nil)

// GenerateContent calls Models.GenerateContent.
//
// On the Gemini API the system instruction and the function declarations are
// most of a request's bytes (about 10 KB of 11 KB for a first turn), and the
// SDK turns its whole input into JSON, decodes that into maps, copies them
// and encodes the maps again on every call. When the two are of the plain
// kind (text parts; tools that only declare functions), which the SDK passes
// through to the wire unchanged, they are set into the request body as
// they are, so the body's one encoding reads them straight from their types.
// Anything else goes through the SDK untouched.
func (g *Gemini) GenerateContent(ctx context.Context, model string, contents []*genai.Content, config *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	if config == nil || g.Client.ClientConfig().Backend != genai.BackendGeminiAPI || !plainRequest(config) {
		return g.Client.Models.GenerateContent(ctx, model, contents, config)
	}
	extra := make(map[string]any, 2)
	c := *config
	if c.SystemInstruction != nil {
		extra["systemInstruction"] = c.SystemInstruction
		c.SystemInstruction = nil
	}
	if len(c.Tools) > 0 {
		extra["tools"] = c.Tools
		c.Tools = nil
	}
	var opts genai.HTTPOptions
	if c.HTTPOptions != nil {
		opts = *c.HTTPOptions
	}
	opts.ExtrasRequestProvider = func(body map[string]any) map[string]any {
		for k, v := range extra {
			body[k] = v
		}
		return body
	}
	c.HTTPOptions = &opts
	return g.Client.Models.GenerateContent(ctx, model, contents, &c)
}

// plainRequest reports whether config's system instruction and tools are of
// the kind the SDK sends as they are: text parts only, function declarations
// only, and no hook of the caller's on the request body.
func plainRequest(config *genai.GenerateContentConfig) bool {
	if config.HTTPOptions != nil && (config.HTTPOptions.ExtrasRequestProvider != nil || config.HTTPOptions.ExtraBody != nil) {
		return false
	}
	if si := config.SystemInstruction; si != nil {
		for _, p := range si.Parts {
			if p == nil || !onlyField(*p, "Text") {
				return false
			}
		}
	}
	for _, t := range config.Tools {
		if t == nil || !onlyField(*t, "FunctionDeclarations") {
			return false
		}
	}
	return config.SystemInstruction != nil || len(config.Tools) > 0
}

// onlyField reports whether every field of the struct v but the one named is
// its zero value: a field the SDK adds in a later version counts too.
func onlyField(v any, name string) bool {
	rv := reflect.ValueOf(v)
	for i := range rv.NumField() {
		if rv.Type().Field(i).Name != name && !rv.Field(i).IsZero() {
			return false
		}
	}
	return true
}
