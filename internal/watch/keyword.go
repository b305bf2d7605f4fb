package watch

import (
	"fmt"
	"strings"
)

// CheckKeyword accepts an IMAP keyword (RFC 9051 flag-keyword, an atom): no
// space, parentheses, brace, quote, backslash or wildcard.
func CheckKeyword(k string) error {
	if strings.ContainsAny(k, " ()\\{]%*\"") {
		return fmt.Errorf("%q: not a valid IMAP keyword", k)
	}
	return nil
}
