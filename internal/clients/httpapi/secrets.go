package httpapi

import "strings"

// Redacted replaces every secret.
const Redacted = "[redacted]"

// Secrets are the configured values (tokens, passwords, header values) that
// must never be shown: they are removed from what a tool answered before it
// reaches the model, the outcome or a log line. Empty values are ignored.
type Secrets []string

// String returns s with every secret replaced by Redacted.
func (sec Secrets) String(s string) string {
	for _, v := range sec {
		if v != "" && strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Redacted)
		}
	}
	return s
}

// Value redacts every string inside v, a decoded JSON value (maps with
// string keys, slices, strings, numbers, booleans, nil), keys included. Maps
// and slices are changed in place and returned.
func (sec Secrets) Value(v any) any {
	if len(sec) == 0 {
		return v
	}
	switch x := v.(type) {
	case string:
		return sec.String(x)
	case []any:
		for i := range x {
			x[i] = sec.Value(x[i])
		}
		return x
	case map[string]any:
		for k, e := range x {
			if rk := sec.String(k); rk != k {
				delete(x, k)
				k = rk
			}
			x[k] = sec.Value(e)
		}
		return x
	}
	return v
}
