// Package toolstest gives tests the tool bindings production runs (the
// shipped tools.yaml, with the built-in functions only: http and mcp bindings
// need backends a unit test does not start), and a scenario and a message to
// call them for.
package toolstest

import (
	"net/mail"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	embedded "triage/instructions"
	"triage/internal/instructions"
	"triage/internal/message"
)

// Shipped loads the shipped tools.yaml and drops every binding that is not a
// built-in: the guardrails and policies production runs on its own functions.
func Shipped(t testing.TB) *instructions.Tools {
	t.Helper()
	ts, err := instructions.LoadTools(embedded.FS, instructions.ToolsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range ts.Tools {
		if b.Builtin == "" {
			delete(ts.Tools, name)
		}
	}
	return ts
}

// Function is a scenario function with params compiled as instructions.LoadScenarios
// compiles them.
func Function(t testing.TB, name string, params map[string]any) instructions.Function {
	t.Helper()
	c := jsonschema.NewCompiler()
	url := "mem:///" + name + ".json"
	if err := c.AddResource(url, params); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return instructions.Function{Name: name, Description: name, Parameters: params, Schema: sch}
}

// Object is the JSON Schema of an object with exactly props.
func Object(required []any, props map[string]any) map[string]any {
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

// Scenario declares the builtins (notify_staff only when it escalates) and
// extra.
func Scenario(t testing.TB, escalate bool, extra ...instructions.Function) *instructions.Scenario {
	str := map[string]any{"type": "string"}
	fns := []instructions.Function{
		Function(t, "check_warranty", Object([]any{"serial_number"}, map[string]any{"serial_number": str})),
		Function(t, "create_ticket", Object([]any{"serial_number", "customer_email", "priority"}, map[string]any{
			"serial_number":  str,
			"customer_email": str,
			"priority":       map[string]any{"type": "string", "enum": []any{"low", "normal", "high"}},
		})),
		Function(t, "send_email", Object([]any{"to", "subject", "body"}, map[string]any{
			"to": str, "subject": str, "body": map[string]any{"type": "string", "minLength": 1},
		})),
	}
	if escalate {
		fns = append(fns, Function(t, "notify_staff", Object([]any{"subject", "body"}, map[string]any{"subject": str, "body": str})))
	}
	return &instructions.Scenario{Name: "test", Functions: append(fns, extra...), Escalate: escalate, Body: "x"}
}

// Message is an inbound message whose Reply-To differs from its From, with
// a serial in its text and another in its quoted part.
func Message() *message.Message {
	return &message.Message{
		MessageID: "<in-1@example.com>",
		From:      mail.Address{Name: "Jan Kowalski", Address: "jan@example.com"},
		ReplyTo:   "jan.reply@example.com",
		Subject:   "Reklamacja SN-48213-PL",
		Text:      "Dzień dobry, mój LAPTOP nie działa. Prosze o pomoc. S/N: abc.123456.\n",
		Quoted:    "> old serial XY-777",
	}
}
