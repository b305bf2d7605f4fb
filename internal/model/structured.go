// A structured call: one prompt, an answer asked for as JSON and decoded.

package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"google.golang.org/genai"

	"triage/internal/agent"
)

// ErrNotJSON marks an answer that is not the requested JSON.
var ErrNotJSON = errors.New("the answer is not the requested JSON")

// AskJSON sends prompt as the one user turn to m (model id name) with
// config, which asks for a JSON answer, and decodes the answer's text into
// out. It returns that text, and the model's error as is or ErrNotJSON
// wrapping the decoder's.
func AskJSON(ctx context.Context, m agent.Model, name string, config *genai.GenerateContentConfig, prompt string, out any) (string, error) {
	resp, err := m.GenerateContent(ctx, name, []*genai.Content{genai.NewContentFromText(prompt, genai.RoleUser)}, config)
	if err != nil {
		return "", err
	}
	raw := ""
	if resp != nil {
		raw = resp.Text()
	}
	if err := json.Unmarshal([]byte(raw), out); err != nil {
		return raw, fmt.Errorf("%w: %w", ErrNotJSON, err)
	}
	return raw, nil
}
