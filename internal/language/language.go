// Package language names the language a customer wrote in, as an ISO 639-1
// code, with github.com/pemistahl/lingua-go restricted to a configured set
// of languages and their neighbours. A text too short or too unclear to
// tell, or written in a language outside the configured set, gets the
// inbox's default language: never a confident wrong guess.
//
// Why lingua-go: it is the best-kept Go detector (statistical n-gram models
// of 75 languages plus rules for unique alphabets and characters), it can
// be restricted to the languages an inbox expects, and its low-accuracy
// mode (trigram models, and the bigram and unigram models an unknown
// trigram falls back to) loads about 1 MiB of heap per language,
// lazily, at the first text that needs it. Its high-accuracy mode (all
// n-grams) costs about 14 MiB of heap per language; short texts are where
// the fallback rules below, not a bigger model, keep it honest.
//
// A detector told only the configured languages names one of them for any
// text: Hungarian came out German, Portuguese Spanish, Swedish English, all
// with full confidence. So the detector also knows the Neighbours, the
// European languages most often mistaken for a configured one, and a text
// found to be in one of them gets the default. A language in neither set is
// still mapped onto the nearest it knows; the test set in testdata/mails
// and TestConfusion measure where that stands.
//
// lingua-go embeds the models of all its languages and n-gram lengths
// (124 MB) in its package; only the trigram, bigram and unigram models are
// ever read here. The Makefile's build target leaves the others out and
// stores those it keeps uncompressed (trim.go, run by go run);
// BenchmarkStartup and BenchmarkDetect measure the start-up, memory and
// per-message cost.
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
// language added makes short texts harder to tell; an inbox that needs more
// configures them (pipeline.languages).
var DefaultLanguages = []string{"pl", "en", "de", "fr", "es", "it", "cs", "uk", "ru", "et", "ja", "ko", "zh"}

// Neighbours are told apart besides the configured languages, so that a
// text in one of them is not mistaken for a configured language: it gets
// the default. They are the European Latin-script languages lingua knows
// that a shop in central Europe hears from and that its models confuse
// with the default set (Dutch and Swedish with German and English,
// Portuguese, Romanian and Catalan with Spanish and Italian, Slovak,
// Slovene and Croatian with Czech and Polish, Hungarian, Turkish, Finnish,
// the Baltic and the Nordic languages with any of them). Each costs about
// 0.9 MiB of heap once a text needs it. A neighbour that is configured is
// simply a configured language.
var Neighbours = []string{"nl", "pt", "ro", "ca", "sv", "da", "nb", "fi", "hu", "sk", "sl", "hr", "tr", "lt", "lv"}

// DefaultLanguage is Config.Default when unset.
const DefaultLanguage = "pl"

// Thresholds of a confident answer, and the bound on what is read.
const (
	// MinConfidence is the least confidence lingua must give the winner.
	MinConfidence = 0.6
	// MinMargin is the least lead of the winner over the runner-up:
	// lingua's minimum relative distance (DetectLanguageOf's rule),
	// applied to the confidence values.
	MinMargin = 0.25
	// MinLetters is the fewest letters a text needs before it is judged
	// at all; fewer ("OK", "Dzięki!") get the default. Texts in Chinese,
	// Japanese or Korean script, a word in a letter or two, need
	// MinCJKLetters.
	MinLetters    = 8
	MinCJKLetters = 2
	// MinWords is the fewest words a text needs before lingua's
	// statistics are trusted; a shorter one ("Broken blender", "Stále to
	// nefunguje") is told only when lingua's rules decide it (an alphabet
	// or letters only one candidate language has, confidence 1). Trigram
	// statistics of two or three words gave confident wrong answers.
	MinWords = 5
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

// Result is what Judge tells of a text.
type Result struct {
	// Code is the configured language the text is in, or the default when
	// it cannot be told (Sure false).
	Code string
	// Sure reports that the text was told: it is in Code, a configured
	// language. False: Code is the default, because the text is too short
	// or unclear, or in a language outside the configured set.
	Sure bool
	// Guess is lingua's best guess among the configured languages and the
	// neighbours ("" when it made none), trusted or not, and Confidence its
	// confidence value (0 to 1).
	Guess      string
	Confidence float64
	// Clear reports that the text is clearly in Guess, by the rules that
	// make Sure, whether Guess is configured or a neighbour.
	Clear bool
}

// Detector names languages; safe for concurrent use. Its models load at
// the first Judge that needs them, not in New.
type Detector struct {
	codes  []string
	def    string
	langs  []lingua.Language // configured, then the neighbours not configured
	once   sync.Once
	lingua lingua.LanguageDetector
	// first is the first detection (see Judge).
	first sync.Once
	// recent are the results of the last texts judged (see Judge).
	recent recent
}

// Remembered is how many of the last texts judged a Detector remembers
// the result of: a reply's body is judged by the one-language check and
// again by the signer, the replies of one scenario share most of their
// lines, and lingua's statistics over 28 languages are the dearest part of
// a reply. Each entry holds at most MaxBytes letters.
const Remembered = 64

// recent remembers the results of the last Remembered texts judged, by
// what lingua reads of them (seen).
type recent struct {
	mu   sync.Mutex
	by   map[seen]Result
	keys []seen // oldest first
}

// seen is what Judge's result depends on: the text's letters, lower-cased
// (lingua reads the runs of letters of the lower-cased text and nothing
// else: no digit, punctuation or space), each run of other characters
// one space, and the number of words count finds in it (which depends
// on an apostrophe or a hyphen inside a word). Two texts that differ
// only in a ticket number, a date or the space around them are one seen.
type seen struct {
	letters string
	words   int
}

// seenOf is text's seen, of words words.
func seenOf(text string, words int) seen {
	var b strings.Builder
	b.Grow(len(text))
	gap := false
	for _, r := range text {
		if l := unicode.ToLower(r); unicode.IsLetter(l) {
			if gap && b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteRune(l)
			gap = false
			continue
		}
		gap = true
	}
	return seen{letters: b.String(), words: words}
}

func (r *recent) get(k seen) (Result, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	res, ok := r.by[k]
	return res, ok
}

func (r *recent) put(k seen, res Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.by[k]; ok {
		return
	}
	if r.by == nil {
		r.by = make(map[seen]Result, Remembered)
	}
	if len(r.keys) == Remembered {
		delete(r.by, r.keys[0])
		r.keys = append(r.keys[:0], r.keys[1:]...)
	}
	r.by[k] = res
	r.keys = append(r.keys, k)
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
	for _, c := range Neighbours {
		if l, ok := linguaLanguage(c); ok && !slices.Contains(d.codes, c) {
			d.langs = append(d.langs, l)
		}
	}
	return d, nil
}

// Words counts the words of text's first MaxBytes as Judge does (runs of
// letters, with an apostrophe or hyphen inside): a text of fewer than
// MinWords is told only by lingua's rules.
func Words(text string) int {
	_, _, words := count(clip.Bytes(text, MaxBytes, ""))
	return words
}

// count counts text's letters, those in Chinese, Japanese or Korean
// script, and its words.
func count(text string) (letters, cjk, words int) {
	inWord := false
	for _, r := range text {
		isLetter := unicode.IsLetter(r)
		if isLetter {
			letters++
			if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
				cjk++
			}
			if !inWord {
				words++
			}
		}
		inWord = isLetter || (inWord && (r == '\'' || r == '-' || r == '’'))
	}
	return letters, cjk, words
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

// warmText is what Warm judges: plain ASCII letters, which every
// Latin-script language among the candidates could have written, so that
// lingua loads the models of all of them (its rules would narrow a text
// with letters only some alphabets have, such as ł or ß, to those).
const warmText = "Hello, my coffee machine stopped heating the water yesterday and the display shows an error; can I send it for a repair under the warranty?"

// Warm loads the models the first detection of a Latin-script text needs
// (about 150 ms of CPU and most of the models' heap), so that a daemon
// loads them while it connects rather than at its first message. A Judge
// that comes while Warm runs waits for the models it loads, as it would
// wait for another first detection; after Warm, Judge answers as before.
// Warm with one language configured does nothing (Judge never reads a
// model then).
func (d *Detector) Warm() {
	if len(d.codes) == 1 {
		return
	}
	d.build()
	d.first.Do(func() { d.lingua.ComputeLanguageConfidenceValues(warmText) })
}

func (d *Detector) build() {
	d.once.Do(func() {
		d.lingua = lingua.NewLanguageDetectorBuilder().FromLanguages(d.langs...).WithLowAccuracyMode().Build()
	})
}

// Detect returns the ISO 639-1 code of text's language, or the default
// when it cannot be told (Judge).
func (d *Detector) Detect(text string) string { return d.Judge(text).Code }

// Judge tells text's language: one of the configured languages when the
// text has MinLetters letters (MinCJKLetters in Chinese, Japanese or
// Korean script), lingua's best guess among the configured languages and
// the neighbours is configured, clear (MinConfidence, MinMargin), and
// either decided by lingua's rules or drawn from MinWords words or more;
// the default otherwise. Only the first MaxBytes of text are read, and the
// result for a text judged lately, or for one that differs from it only in
// what lingua does not read (digits, punctuation, space, case), is
// remembered (Remembered), not judged again.
func (d *Detector) Judge(text string) Result {
	if len(d.codes) == 1 {
		return Result{Code: d.def}
	}
	text = strings.TrimSpace(clip.Bytes(text, MaxBytes, ""))
	letters, cjk, words := count(text)
	if letters < MinLetters && cjk < MinCJKLetters {
		return Result{Code: d.def}
	}
	k := seenOf(text, words)
	if r, ok := d.recent.get(k); ok {
		return r
	}
	r := d.judge(text, words)
	d.recent.put(k, r)
	return r
}

// judge is Judge of a text clipped to MaxBytes, of words words, that has
// the letters to be judged: lingua's part.
func (d *Detector) judge(text string, words int) Result {
	unsure := Result{Code: d.def}
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
	if len(values) < 2 || values[0].Value() == 0 {
		return unsure
	}
	best, next := values[0], values[1]
	unsure.Guess = strings.ToLower(best.Language().IsoCode639_1().String())
	unsure.Confidence = best.Value()
	switch {
	case best.Value() < MinConfidence || best.Value()-next.Value() < MinMargin:
		return unsure
	case words < MinWords && best.Value() < 1:
		return unsure
	}
	unsure.Clear = true
	if !d.Knows(unsure.Guess) {
		return unsure
	}
	return Result{Code: unsure.Guess, Sure: true, Guess: unsure.Guess, Confidence: best.Value(), Clear: true}
}
