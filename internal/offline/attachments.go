package offline

import (
	"fmt"
	"strings"
)

// attachmentsIgnored says, in the customer's language where there is a
// template (else Polish, the inbox's default), that the stand-in did not
// look at the n attachments it was sent: it reads no images or PDFs.
func attachmentsIgnored(lang string, n int) string {
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(lang)), "en") {
		return fmt.Sprintf("(The offline stand-in model does not look at attachments: the %d attached photo(s) or document(s) were not read. A person will look at them if needed.)", n)
	}
	return fmt.Sprintf("(Model offline nie ogląda załączników: przesłane zdjęcia lub dokumenty (%d) nie zostały odczytane. W razie potrzeby obejrzy je konsultant.)", n)
}
