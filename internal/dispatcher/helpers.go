// Checks the policies and the builtins share: bare addresses, plain-text
// bodies, and the model-facing text of a schema error.

package dispatcher

import (
	"errors"
	"fmt"
	"maps"
	"net/mail"
	"strconv"
	"strings"
	"triage/internal/clip"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
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

// schemaPrinter renders the validator's error kinds in English, as the
// validator's own Error does.
var schemaPrinter = message.NewPrinter(language.English)

// schemaMessage turns the validator's error into one line for the model:
// each keyword that failed, where it failed ("at '/priority': value must be
// one of ..."), in the validator's order, without the schema's URL.
func schemaMessage(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var parts []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		_, top := e.ErrorKind.(*kind.Schema)    // "validation failed with <schema URL>"
		_, ref := e.ErrorKind.(*kind.Reference) // a $ref its one cause failed under
		if !top && !(ref && len(e.Causes) == 1) {
			parts = append(parts, "at "+quotePointer(e.InstanceLocation)+": "+e.ErrorKind.LocalizedString(schemaPrinter))
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	if len(parts) == 0 {
		return err.Error()
	}
	return "arguments do not match the schema: " + strings.Join(parts, "; ")
}

// quotePointer is an instance location as the validator shows it: a JSON
// pointer ("/items/0"), quoted with single quotes.
func quotePointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteString("/" + strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	q := strings.ReplaceAll(strconv.Quote(b.String()), `\"`, `"`)
	q = strings.ReplaceAll(q, "'", `\'`)
	return "'" + q[1:len(q)-1] + "'"
}

// excerpt is the beginning of a value a refusal quotes back to the model:
// enough to know which value was meant, never the megabytes a model sent.
func excerpt(v string) string { return clip.Bytes(v, 80, "...") }

func cloneArgs(args map[string]any) map[string]any {
	if args == nil {
		return map[string]any{}
	}
	return maps.Clone(args)
}
