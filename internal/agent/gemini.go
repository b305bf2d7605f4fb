package agent

import (
	"context"

	"google.golang.org/genai"
)

// Gemini adapts *genai.Client to Model.
type Gemini struct {
	Client *genai.Client
}

var _ Model = (*Gemini)(nil)

// GenerateContent calls Models.GenerateContent.
func (g *Gemini) GenerateContent(ctx context.Context, model string, contents []*genai.Content, config *genai.GenerateContentConfig) (*genai.GenerateContentResponse, error) {
	return g.Client.Models.GenerateContent(ctx, model, contents, config)
}
