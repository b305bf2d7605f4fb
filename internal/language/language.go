// Package language names the language a customer wrote in, as an ISO 639-1
// code, with github.com/pemistahl/lingua-go restricted to a configured set
// of languages. A text too short or too mixed to tell gets the inbox's
// default language: never a confident wrong guess.
//
// Why lingua-go: it is the best-kept Go detector (statistical n-gram models
// of 75 languages plus rules for unique alphabets and characters), it can
// be restricted to the languages an inbox expects, and its low-accuracy
// mode (trigram models only) loads a few hundred KiB per language lazily.
// Its high-accuracy mode (all n-grams) costs about 14 MiB of heap per
// language for no gain on whole emails, and texts of 120 characters or
// more use trigrams only either way; short texts are where the fallback
// rule below, not a bigger model, keeps it honest. The models of every
// language are embedded in the binary (about 120 MB) whether used or not:
// the price of a maintained library. BenchmarkNew and BenchmarkDetect
// measure the start-up, memory and per-message cost.
package language

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/pemistahl/lingua-go"

	"triage/internal/clip"
)

// DefaultLanguages is the set told apart when none is configured: the
// languages a Polish shop's customers mostly write in, and Chinese,
// Japanese and Korean (told by their scripts, at almost no cost). Every
// language added makes short texts harder to tell: with the Nordic and
// Baltic languages and Dutch in the set, "Thanks a lot" or "Proszę o
// telefon" got confident wrong answers in the low-accuracy mode, so an
// inbox that needs them configures them (pipeline.languages).
var DefaultLanguages = []string{"pl", "en", "de", "fr", "es", "it", "cs", "uk", "ru", "et", "ja", "ko", "zh"}

// DefaultLanguage is Config.Default when unset.
const DefaultLanguage = "pl"

// Thresholds of a confident answer, and the bound on what is read.
const (
	// MinConfidence is the least confidence lingua must give the winner.
	MinConfidence = 0.6
	// MinMargin is the least lead of the winner over the runner-up.
	MinMargin = 0.25
	// MinLetters is the fewest letters a text needs before it is judged
	// at all; fewer ("OK", "Dzięki!") get the default. Texts in Chinese,
	// Japanese or Korean script, a word in a letter or two, need
	// MinCJKLetters.
	MinLetters    = 8
	MinCJKLetters = 2
	// MaxBytes is how much of a text is read: a language shows in its
	// first lines, and the cost stays bounded whatever a stranger sends.
	MaxBytes = 1024
)

// Config configures a Detector.
type Config struct {
	// Languages are the ISO 639-1 codes to tell apart (default
	// DefaultLanguages). Default is always among them.
	Languages []string
	// Default is the language of a text that cannot be told (default
	// DefaultLanguage).
	Default string
}

// Detector names languages; safe for concurrent use. Its models load at
// the first Detect, not in New.
type Detector struct {
	codes  []string
	def    string
	langs  []lingua.Language
	once   sync.Once
	lingua lingua.LanguageDetector
	// first is the first detection (see Detect).
	first sync.Once
}

// New checks cfg: every code must be an ISO 639-1 code lingua knows.
func New(cfg Config) (*Detector, error) {
	codes := cfg.Languages
	if len(codes) == 0 {
		codes = DefaultLanguages
	}
	def := strings.ToLower(strings.TrimSpace(cfg.Default))
	if def == "" {
		def = DefaultLanguage
	}
	d := &Detector{def: def}
	var errs []error
	for _, c := range append([]string{def}, codes...) {
		c = strings.ToLower(strings.TrimSpace(c))
		l, ok := linguaLanguage(c)
		if !ok {
			errs = append(errs, fmt.Errorf("language: %q is not an ISO 639-1 code of a supported language (e.g. pl, en, de)", c))
			continue
		}
		if slices.Contains(d.codes, c) {
			continue
		}
		d.codes = append(d.codes, c)
		d.langs = append(d.langs, l)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return d, nil
}

// linguaLanguage is lingua's language for an ISO 639-1 code.
func linguaLanguage(code string) (lingua.Language, bool) {
	iso := lingua.GetIsoCode639_1FromValue(strings.ToUpper(code))
	if iso == lingua.UnknownIsoCode639_1 {
		return lingua.Unknown, false
	}
	l := lingua.GetLanguageFromIsoCode639_1(iso)
	return l, l != lingua.Unknown
}

// Default is the language of a text that cannot be told.
func (d *Detector) Default() string { return d.def }

// Languages are the codes told apart, the default first.
func (d *Detector) Languages() []string { return slices.Clone(d.codes) }

// Knows reports whether code is one of the languages told apart.
func (d *Detector) Knows(code string) bool { return slices.Contains(d.codes, code) }

func (d *Detector) build() {
	d.once.Do(func() {
		b := lingua.NewLanguageDetectorBuilder().FromLanguages(d.langs...)
		if len(d.langs) == 1 {
			b = lingua.NewLanguageDetectorBuilder().FromLanguages(d.langs[0], lingua.English)
		}
		d.lingua = b.WithLowAccuracyMode().Build()
	})
}

// Detect returns the ISO 639-1 code of text's language, or the default
// when the text is too short (MinLetters), or lingua's best guess is not
// clear (MinConfidence, MinMargin) or not among the configured languages.
// Only the first MaxBytes of text are read.
func (d *Detector) Detect(text string) string {
	if len(d.langs) == 1 {
		return d.def
	}
	text = clip.Bytes(text, MaxBytes, "")
	letters, cjk := 0, 0
	for _, r := range text {
		if unicode.IsLetter(r) {
			letters++
			if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
				cjk++
			}
		}
	}
	if letters < MinLetters && cjk < MinCJKLetters {
		return d.def
	}
	d.build()
	// lingua loads a language's model at its first use, and detections
	// that meet before it is loaded each load it (a Latin-script text
	// needs about 150 ms of CPU of them): the first detection runs alone,
	// and those that meet it wait for the models it loads.
	var values []lingua.ConfidenceValue
	first := false
	d.first.Do(func() { values, first = d.lingua.ComputeLanguageConfidenceValues(text), true })
	if !first {
		values = d.lingua.ComputeLanguageConfidenceValues(text)
	}
	if len(values) < 2 {
		return d.def
	}
	best, next := values[0], values[1]
	if best.Value() < MinConfidence || best.Value()-next.Value() < MinMargin {
		return d.def
	}
	code := strings.ToLower(best.Language().IsoCode639_1().String())
	if !d.Knows(code) {
		return d.def
	}
	return code
}
