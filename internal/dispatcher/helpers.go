// Checks the policies and the builtins share: bare addresses, plain-text
// bodies, and the model-facing text of a schema error.

package dispatcher

import (
	"fmt"
	"maps"
	"net/mail"
	"strings"
)

// BareAddress parses "Name <a@b>" or "a@b" and returns the lower-cased bare
// address; it refuses lists.
func BareAddress(s string) (string, error) {
	list, err := mail.ParseAddressList(strings.TrimSpace(s))
	if err != nil {
		return "", err
	}
	if len(list) != 1 {
		return "", fmt.Errorf("%d addresses", len(list))
	}
	return strings.ToLower(list[0].Address), nil
}

func sameAddress(bare, other string) bool {
	return other != "" && strings.EqualFold(bare, strings.TrimSpace(other))
}

// PlainBody refuses a reply body over max bytes (default
// DefaultMaxBodyBytes) or one that looks like HTML: replies are plain text.
func PlainBody(body string, max int) error {
	if max <= 0 {
		max = DefaultMaxBodyBytes
	}
	if len(body) > max {
		return &Error{Code: CodeBodyTooLarge, Message: fmt.Sprintf("body is %d bytes, the limit is %d", len(body), max), Refused: true}
	}
	if looksLikeHTML(body) {
		return &Error{Code: CodeBodyNotPlainText, Message: "body must be plain text, not HTML", Refused: true}
	}
	return nil
}

var htmlMarkers = []string{"<html", "<body", "<div", "<p>", "<p ", "</p>", "<br", "<a href"}

func looksLikeHTML(body string) bool {
	lower := strings.ToLower(body)
	for _, m := range htmlMarkers {
		if strings.Contains(lower, m) {
			return true
		}
	}
	return false
}

// schemaMessage turns the validator's error into one line for the model,
// without the schema URL preamble: "at '/priority': value must be one of ...".
func schemaMessage(err error) string {
	var parts []string
	for i, line := range strings.Split(err.Error(), "\n") {
		line = strings.TrimSpace(line)
		if i == 0 && strings.HasPrefix(line, "jsonschema validation failed") {
			_, rest, found := strings.Cut(line, "' - ")
			if !found {
				continue
			}
			line = rest
		}
		line = strings.TrimSpace(strings.TrimPrefix(line, "- "))
		if line != "" {
			parts = append(parts, line)
		}
	}
	if len(parts) == 0 {
		return err.Error()
	}
	return "arguments do not match the schema: " + strings.Join(parts, "; ")
}

func cloneArgs(args map[string]any) map[string]any {
	if args == nil {
		return map[string]any{}
	}
	return maps.Clone(args)
}
