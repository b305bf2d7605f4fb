package processor

import "strings"

// Language guesses the customer's language, "pl" or "en". Polish is the
// default: English only wins on clear evidence.
func Language(text string) string {
	t := " " + strings.ToLower(text) + " "
	pl, en := 0, 0
	for _, r := range t {
		if strings.ContainsRune("ąćęłńóśźż", r) {
			pl += 2
		}
	}
	for _, w := range plWords {
		pl += strings.Count(t, w)
	}
	for _, w := range enWords {
		en += strings.Count(t, w)
	}
	if en > pl && en >= 2 {
		return "en"
	}
	return "pl"
}

var (
	plWords = []string{" dzień dobry", " witam", " proszę", " prosze", " pozdrawiam", " dziękuję", " dziekuje", " jest ", " nie ", " się ", " sie ", " mój ", " moj ", " gwarancj", " naprawa", " urządzen", " dla ", " oraz ", " czy "}
	enWords = []string{" hello", " hi ", " dear ", " please", " thank", " regards", " the ", " my ", " is ", " and ", " warranty", " repair", " would ", " you ", " with "}
)
