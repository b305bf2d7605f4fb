// The German wording of the offline model's replies.

package model

import "strings"

var german = phrases{
	greeting:        "Guten Tag,",
	thanks:          "vielen Dank für Ihre Nachricht.",
	valid:           "Die Garantie für das Gerät mit der Seriennummer %s ist bis %s gültig.",
	validNoDate:     "Die Garantie für das Gerät mit der Seriennummer %s ist gültig.",
	expired:         "Die Garantie für das Gerät mit der Seriennummer %s ist am %s abgelaufen.",
	expiredNoDate:   "Die Garantie für das Gerät mit der Seriennummer %s ist abgelaufen.",
	notFound:        "Die Seriennummer %s haben wir in unserem Garantieregister nicht gefunden. Bitte prüfen Sie die Nummer auf dem Typenschild des Geräts oder auf dem Kaufbeleg und senden Sie sie als Antwort auf diese Nachricht.",
	otherStatus:     "Garantiestatus des Geräts mit der Seriennummer %s: %s.",
	checkFailed:     "Wir konnten die Garantie für die Seriennummer %s gerade nicht automatisch prüfen.",
	ticket:          "Wir haben die Anfrage %s angelegt. Bitte geben Sie diese Nummer in Ihrer weiteren Korrespondenz an.",
	stepFailed:      "Wir konnten gerade nicht alle Schritte automatisch ausführen (zum Beispiel eine Serviceanfrage anlegen).",
	consultant:      "Ein Mitarbeiter prüft die Angelegenheit und antwortet Ihnen persönlich.",
	retryLater:      "Bitte antworten Sie etwas später auf diese Nachricht, dann versuchen wir es erneut.",
	askSerial:       "Um die Garantie zu prüfen, benötigen wir die Seriennummer des Geräts. Sie finden sie auf dem Typenschild auf der Rückseite oder Unterseite des Geräts sowie auf dem Kassenbon oder der Rechnung. Bitte senden Sie sie als Antwort auf diese Nachricht.",
	outOfScope:      "Dieses Postfach bearbeitet ausschließlich Garantie- und Reparaturanliegen, daher können wir hier nicht weiterhelfen. Wenn es um eine Garantie oder Reparatur geht, antworten Sie bitte auf diese Nachricht und nennen Sie die Seriennummer.",
	acknowledge:     "Wir bestätigen den Eingang Ihrer Nachricht.",
	personReplies:   "Ein Mitarbeiter liest sie und antwortet Ihnen persönlich.",
	paidRepair:      "Wir können Ihnen eine kostenpflichtige Reparatur anbieten. Wenn Sie interessiert sind, antworten Sie bitte auf diese Nachricht, und wir erstellen einen Kostenvoranschlag.",
	statutory:       "Für das Gerät gilt jedoch weiterhin die gesetzliche Mängelhaftung des Verkäufers. Im Rahmen dieser Haftung reparieren oder ersetzen wir das Gerät kostenlos. Bitte antworten Sie auf diese Nachricht, dann nennen wir Ihnen die nächsten Schritte.",
	proofOfPurchase: "Um festzustellen, ob für das Gerät die gesetzliche Mängelhaftung des Verkäufers gilt, senden Sie uns bitte den Kaufbeleg (Kassenbon oder Rechnung) mit Kauf- und Lieferdatum als Antwort auf diese Nachricht.",
	found:           "Das haben wir in unseren Unterlagen gefunden:",
	attachments:     "(Das Offline-Ersatzmodell sieht sich keine Anhänge an: die %d angehängten Fotos oder Dokumente wurden nicht gelesen. Bei Bedarf sieht sie sich ein Mitarbeiter an.)",
	automatic:       "(Diese Antwort wurde automatisch vom Offline-Modell von triage erstellt, einem Ersatz ohne KI.)",
}

// templates are the languages the offline model writes, by ISO 639-1 code.
var templates = map[string]phrases{"pl": polish, "en": english, "de": german}

// phrasesFor is the wording in the customer's language when there is a
// template for it, else in the inbox's default language, else Polish.
func phrasesFor(lang, def string) phrases {
	for _, l := range []string{lang, def} {
		if p, ok := templates[strings.ToLower(strings.TrimSpace(l))]; ok {
			return p
		}
	}
	return polish
}
