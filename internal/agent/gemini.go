package agent

import (
	"context"
	"reflect"

	"google.golang.org/genai"
)

// Gemini adapts *genai.Client to Model.
type Gemini struct {
	Client *genai.Client
	// Cache, when set, serves the stable prefix of the loop's calls (the
	// system instruction, the declarations, the tool configuration) from a
	// Gemini context cache: such a call names the cache and carries none
	// of them. A call the cache is refused for is sent again with its
	// prefix (logged).
	Cache *ContextCache
}

var _ Model = (*Gemini)(nil)

// GenerateContent calls Models.GenerateContent.
//
// The SDK turns a call's whole input into JSON, decodes that into maps,
// copies them and encodes the maps again on every call. On the Gemini API
// the system instruction and the function declarations are most of a
// request's bytes (about 10 KB of 11 KB for a first turn), and a customer's
// photo in the turns is megabytes, held three times over while a request
// is built. What the SDK passes to the wire unchanged (the turns and the
// system instruction when their parts are of the kinds partPassed lists;
// tools that only declare functions) is set into the request's body as it
// is, so the body's one encoding reads it straight from its types. The rest,
// a call without a config or with a body hook of the caller's, and Vertex AI
// go through the SDK untouched.
func (g *Gemini) GenerateContent(ctx context.Context, model string, contents []*genai.Content, config *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	if g.Cache == nil || !cacheable(config) {
		return g.generate(ctx, model, contents, config)
	}
	name, key := g.Cache.name(ctx, model, config)
	if name == "" {
		return g.generate(ctx, model, contents, config)
	}
	c := *config
	c.CachedContent, c.SystemInstruction, c.Tools, c.ToolConfig = name, nil, nil, nil
	resp, err := g.generate(ctx, model, contents, &c)
	if err != nil && cacheRefused(err) {
		g.Cache.forget(key, name)
		g.Cache.log().WarnContext(ctx, "context cache refused: the call is sent again uncached", "cache", name, "err", err)
		return g.generate(ctx, model, contents, config)
	}
	return resp, err
}

// generate makes one call, its request built as GenerateContent says.
func (g *Gemini) generate(ctx context.Context, model string, contents []*genai.Content, config *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	// Without a config the SDK sends no generationConfig, and the body hook
	// needs one: such a call, rare, goes through the SDK too.
	if g.Client.ClientConfig().Backend != genai.BackendGeminiAPI || config == nil ||
		(config.HTTPOptions != nil && (config.HTTPOptions.ExtrasRequestProvider != nil || config.HTTPOptions.ExtraBody != nil)) {
		return g.Client.Models.GenerateContent(ctx, model, contents, config)
	}
	extra := make(map[string]any, 3)
	c := *config
	if len(contents) > 0 && everyPassed(contents) {
		extra["contents"] = contents
		contents = nil
	}
	// The SDK gives a system instruction without a role the user's, in
	// place: one without is left to it.
	if si := c.SystemInstruction; si != nil && si.Role != "" && everyPassed([]*genai.Content{si}) {
		extra["systemInstruction"] = si
		c.SystemInstruction = nil
	}
	if len(c.Tools) > 0 && declarationsOnly(c.Tools) {
		extra["tools"] = c.Tools
		c.Tools = nil
	}
	if len(extra) == 0 {
		return g.Client.Models.GenerateContent(ctx, model, contents, config)
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

// partPassed names the fields of a genai.Part the SDK copies to a Gemini API
// request as they are; a part with any other field set goes through the SDK.
var partPassed = map[string]bool{
	"Text": true, "InlineData": true, "FunctionCall": true, "FunctionResponse": true,
	"Thought": true, "ThoughtSignature": true,
}

// contentPassed names the fields of a genai.Content the SDK copies as they
// are.
var contentPassed = map[string]bool{"Role": true, "Parts": true}

// callPassed names the fields of a genai.FunctionCall the SDK copies as they
// are (it refuses the others on the Gemini API).
var callPassed = map[string]bool{"ID": true, "Name": true, "Args": true}

// everyPassed reports whether every part of contents is of the kinds the
// SDK sends as they are.
func everyPassed(contents []*genai.Content) bool {
	for _, ct := range contents {
		if ct == nil || !onlyFields(*ct, contentPassed) {
			return false
		}
		for _, p := range ct.Parts {
			if p == nil || !onlyFields(*p, partPassed) || (p.FunctionCall != nil && !onlyFields(*p.FunctionCall, callPassed)) {
				return false
			}
		}
	}
	return true
}

// toolPassed names the one field of a genai.Tool sent as it is.
var toolPassed = map[string]bool{"FunctionDeclarations": true}

// declarationsOnly reports whether every tool only declares functions.
func declarationsOnly(tools []*genai.Tool) bool {
	for _, t := range tools {
		if t == nil || !onlyFields(*t, toolPassed) {
			return false
		}
	}
	return true
}

// onlyFields reports whether every field of the struct v but those named
// is its zero value: a field the SDK adds in a later version counts too.
func onlyFields(v any, named map[string]bool) bool {
	rv := reflect.ValueOf(v)
	for i := range rv.NumField() {
		if !named[rv.Type().Field(i).Name] && !rv.Field(i).IsZero() {
			return false
		}
	}
	return true
}
