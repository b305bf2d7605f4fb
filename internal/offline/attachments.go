package offline

import (
	"fmt"
	"strings"
)

// attachmentsIgnored says, in the customer's language where there is a
// template (English, Polish), else in the inbox's default language (else
// Polish), that the stand-in did not look at the n attachments it was sent:
// it reads no images or PDFs.
func attachmentsIgnored(lang, def string, n int) string {
	norm := func(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
	if l := norm(lang); l != "en" && l != "pl" {
		lang = def
	}
	if norm(lang) == "en" {
		return fmt.Sprintf("(The offline stand-in model does not look at attachments: the %d attached photo(s) or document(s) were not read. A person will look at them if needed.)", n)
	}
	return fmt.Sprintf("(Model offline nie ogląda załączników: przesłane zdjęcia lub dokumenty (%d) nie zostały odczytane. W razie potrzeby obejrzy je konsultant.)", n)
}
