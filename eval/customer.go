package eval

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/genai"

	"triage/internal/agent"
	"triage/internal/clip"
	"triage/internal/model"
)

// CustomerTurn is one message of a simulated conversation: the customer's
// (Customer true) or our reply.
type CustomerTurn struct {
	Customer bool
	Text     string
}

// Customer is a model playing the customer of a case (input.simulated_customer)
// from a persona and a goal: after each of our replies it writes the
// customer's next message, or says the goal is reached.
type Customer struct {
	Model     agent.Model
	ModelName string
}

const customerSystem = `You play a customer writing to a warranty-support inbox, to test it. Stay in
the persona and pursue the goal. Given the conversation so far, write the
customer's next email (plain text, no subject, no quoted history), or set
done when the goal is reached or the support team cannot help further.`

// maxCustomerMessage bounds one simulated message.
const maxCustomerMessage = 4 << 10

// Next returns the customer's next message, or done.
func (cu *Customer) Next(ctx context.Context, sc SimulatedCustomer, conv []CustomerTurn) (string, bool, error) {
	if cu == nil || cu.Model == nil {
		return "", false, errors.New("eval: simulated customer: no model")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Persona: %s\nGoal: %s\n\nConversation so far, oldest first:\n", sc.Persona, sc.Goal)
	for _, t := range conv {
		who := "Support team"
		if t.Customer {
			who = "Customer (you)"
		}
		fmt.Fprintf(&b, "--- %s:\n%s\n", who, clip.Bytes(t.Text, maxJudgeText, clip.Ellipsis))
	}
	config := &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText(customerSystem, genai.RoleUser),
		ResponseMIMEType:  "application/json",
		ResponseSchema: &genai.Schema{
			Type: genai.TypeObject,
			Properties: map[string]*genai.Schema{
				"done":    {Type: genai.TypeBoolean},
				"message": {Type: genai.TypeString},
			},
			Required:         []string{"done", "message"},
			PropertyOrdering: []string{"done", "message"},
		},
	}
	var a struct {
		Done    bool   `json:"done"`
		Message string `json:"message"`
	}
	if _, err := model.AskJSON(ctx, cu.Model, cu.ModelName, config, b.String(), &a); err != nil {
		return "", false, fmt.Errorf("eval: simulated customer: %w", err)
	}
	if a.Done {
		return "", true, nil
	}
	msg := strings.TrimSpace(a.Message)
	if msg == "" {
		return "", false, errors.New("eval: simulated customer: an empty message without done")
	}
	return clip.Bytes(msg, maxCustomerMessage, clip.Ellipsis), false, nil
}
