package language

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"triage/internal/clip"
)

func TestDetect(t *testing.T) {
	d, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ text, want string }{
		// Whole customer emails.
		{"Dzień dobry, mój ekspres SN-48213-PL przestał grzać wodę. Proszę o naprawę gwarancyjną.", "pl"},
		{"Hello, my coffee machine stopped heating the water. The serial number is SN-48213-PL. Could you please repair it under warranty?", "en"},
		{"Guten Tag, meine Kaffeemaschine heizt das Wasser nicht mehr. Die Seriennummer ist SN-48213-PL. Können Sie sie bitte im Rahmen der Garantie reparieren?", "de"},
		{"Bonjour, ma machine à café ne chauffe plus l'eau. Le numéro de série est SN-48213-PL. Pouvez-vous la réparer sous garantie ?", "fr"},
		{"Tere, minu kohvimasin ei soojenda enam vett. Seerianumber on SN-48213-PL. Kas saate selle garantii korras parandada?", "et"},
		{"Dobrý den, můj kávovar přestal ohřívat vodu. Sériové číslo je SN-48213-PL. Můžete ho prosím opravit v rámci záruky?", "cs"},
		{"Добрий день, моя кавоварка перестала нагрівати воду. Серійний номер SN-48213-PL. Чи можете ви її відремонтувати за гарантією?", "uk"},
		{"こんにちは。コーヒーメーカーがお湯を温めなくなりました。シリアル番号はSN-48213-PLです。保証で修理していただけますか。", "ja"},
		{"안녕하세요. 커피 머신이 물을 데우지 않습니다. 일련번호는 SN-48213-PL입니다. 보증 수리가 가능할까요?", "ko"},
		{"您好，我的咖啡机不再加热水了。序列号是SN-48213-PL。可以保修维修吗？", "zh"},
		// Short, but five words or more, and clear.
		{"Vielen Dank für Ihre Hilfe!", "de"},
		{"When will it be fixed?", "en"},
		{"Auto: radio samochodowe nie działa, SN-48213-PL", "pl"},
		// Fewer than MinWords words: lingua's trigram statistics named
		// German for "Broken blender"; only its rules (letters one
		// candidate alone has) decide such a text.
		{"Broken blender", "pl"},
		{"Thanks, pushed.", "pl"},
		{"Thank you very much!", "pl"},
		{"Immer noch kaputt", "pl"},
		{"Wann wird es repariert?", "pl"},
		{"Mixeur en panne", "pl"},
		{"Nadal nie działa", "pl"},
		{"Зламаний блендер", "pl"},
		{"ミキサーが壊れました", "ja"},
		{"믹서기가 고장 났어요", "ko"},
		// A language outside the set, however long: the default, not the
		// configured language nearest to it.
		{"Jó napot, a kávéfőzőm tegnap óta nem melegíti a vizet, és a kijelzőn hiba jelenik meg.", "pl"},
		{"Goedendag, mijn koffiezetapparaat verwarmt sinds gisteren geen water meer. Kunt u het repareren?", "pl"},
		{"Olá, a minha máquina de café deixou de aquecer a água ontem. Posso enviá-la para reparação?", "pl"},
		{"Hej, min kaffebryggare har sedan i går slutat värma vattnet. Kan jag skicka in den för reparation?", "pl"},
		// Too short or mixed: the default, never a guess.
		{"OK", "pl"},
		{"Hi", "pl"},
		{"SN-48213-PL", "pl"},
		{"", "pl"},
		{"👍👍👍", "pl"},
		{"Danke", "pl"},
		{"Hi, thanks", "pl"},
		{"Dzień dobry, my coffee machine is broken", "pl"},
	}
	for _, tt := range tests {
		if got := d.Detect(tt.text); got != tt.want {
			t.Errorf("Detect(%q) = %s, want %s", tt.text, got, tt.want)
		}
	}
}

// TestDefaultAndSet: the default is configurable and always told apart; a
// language outside the set is never answered.
func TestDefaultAndSet(t *testing.T) {
	d, err := New(Config{Languages: []string{"en", "de"}, Default: "en"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"en", "de"}, d.Languages()); diff != "" {
		t.Errorf("Languages (-want +got):\n%s", diff)
	}
	for text, want := range map[string]string{
		"OK": "en",
		"Guten Tag, meine Kaffeemaschine heizt das Wasser nicht mehr. Bitte reparieren Sie sie.": "de",
	} {
		if got := d.Detect(text); got != want {
			t.Errorf("Detect(%q) = %s, want %s", text, got, want)
		}
	}
	pl, err := New(Config{Languages: []string{"en"}, Default: "pl"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"pl", "en"}, pl.Languages()); diff != "" {
		t.Errorf("the default joins the set (-want +got):\n%s", diff)
	}
	one, err := New(Config{Languages: []string{"de"}, Default: "de"})
	if err != nil {
		t.Fatal(err)
	}
	if got := one.Detect("Hello, my coffee machine is broken, please repair it."); got != "de" {
		t.Errorf("one language configured: Detect = %s, want de", got)
	}
}

func TestNewRejectsUnknownCodes(t *testing.T) {
	for _, cfg := range []Config{
		{Languages: []string{"pl", "xx"}},
		{Default: "polish"},
		{Languages: []string{"en", "klingon"}, Default: "en"},
	} {
		_, err := New(cfg)
		if err == nil || !strings.Contains(err.Error(), "ISO 639-1") {
			t.Errorf("New(%+v): err %v, want one naming the bad code", cfg, err)
		}
	}
}

// TestDetectReadsABoundedPrefix: a huge text costs what MaxBytes costs.
func TestDetectReadsABoundedPrefix(t *testing.T) {
	d, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	huge := "Hello, my coffee machine stopped heating the water, please repair it. " + strings.Repeat("Dzień dobry, proszę o naprawę. ", 200000)
	if got := d.Detect(huge[:MaxBytes/2] + "ą"); got != "pl" && got != "en" {
		t.Errorf("Detect = %s", got)
	}
	if got := clip.Bytes("aąb", 2, ""); got != "a" {
		t.Errorf("clip cut a rune: %q", got)
	}
	_ = d.Detect(huge) // bounded: reads MaxBytes of the 6 MB
}

// TestJudge: Judge says whether the text was told, and what lingua guessed
// when it was not (a neighbour, a short text).
func TestJudge(t *testing.T) {
	d, err := New(Config{Languages: []string{"pl", "en", "de"}, Default: "pl"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text  string
		code  string
		sure  bool
		guess string
	}{
		{"Guten Tag, meine Kaffeemaschine heizt das Wasser nicht mehr. Bitte reparieren Sie sie.", "de", true, "de"},
		{"Goedendag, mijn koffiezetapparaat verwarmt sinds gisteren geen water meer. Kunt u het repareren?", "pl", false, "nl"},
		{"Jó napot, a kávéfőzőm tegnap óta nem melegíti a vizet, és a kijelzőn hiba jelenik meg.", "pl", false, "hu"},
		{"OK", "pl", false, ""},
	}
	for _, tt := range tests {
		r := d.Judge(tt.text)
		if r.Code != tt.code || r.Sure != tt.sure || r.Guess != tt.guess || r.Clear != (tt.guess != "") {
			t.Errorf("Judge(%q) = %+v, want code %s sure %v guess %s", tt.text, r, tt.code, tt.sure, tt.guess)
		}
	}
}

// TestJudgeRemembers: a text judged lately is not judged again (the
// one-language check and the signer read the same reply body), its result
// is the same with other space around it, and what is remembered stays
// bounded (Remembered texts of at most MaxBytes letters each).
func TestJudgeRemembers(t *testing.T) {
	d, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	body := "Guten Tag,\n\nleider steht in der Anleitung nichts zum Entkalken dieses Geräts. Bitte nennen Sie uns die Seriennummer."
	first := d.Judge(body)
	if _, ok := d.recent.get(seenOf(strings.TrimSpace(body), Words(body))); !ok {
		t.Fatalf("Judge(%q) = %+v, not remembered", body, first)
	}
	if again := d.Judge("\n" + body + "\n\n"); again != first || !first.Sure || first.Code != "de" {
		t.Errorf("Judge again = %+v, first %+v; want the same, de", again, first)
	}
	long := strings.Repeat("Dzień dobry, mój ekspres nie grzeje wody. ", 100)
	for i := range 2 * Remembered {
		d.Judge(fmt.Sprintf("Zgłoszenie %s. %s", letterName(i), long))
	}
	d.recent.mu.Lock()
	n, keys := len(d.recent.by), len(d.recent.keys)
	size := 0
	for k := range d.recent.by {
		size = max(size, utf8.RuneCountInString(k.letters))
	}
	d.recent.mu.Unlock()
	if n != Remembered || keys != Remembered || size > MaxBytes {
		t.Errorf("remembered %d texts (%d keys), the longest %d letters; want %d, at most %d", n, keys, size, Remembered, MaxBytes)
	}
}

// letterName is i written in letters (a, b, ..., z, ba, bb, ...): a word
// that makes a text one lingua has not read.
func letterName(i int) string {
	s := string(rune('a' + i%26))
	for i /= 26; i > 0; i /= 26 {
		s = string(rune('a'+i%26)) + s
	}
	return s
}

// TestJudgeRemembersWhatLinguaReads: replies that differ only in a ticket
// number, a date, punctuation, case or space are judged once, and each
// gets what a Detector that never saw the others tells of it; a text with
// other letters, or other words (an apostrophe inside a word), is judged
// anew.
func TestJudgeRemembersWhatLinguaReads(t *testing.T) {
	d, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	same := []string{
		"Utworzyliśmy zgłoszenie TKT-000001. Prosimy podawać ten numer w dalszej korespondencji do 2026-11-30.",
		"Utworzyliśmy zgłoszenie TKT-004217. Prosimy podawać ten numer w dalszej korespondencji do 2027-01-15.",
		"UTWORZYLIŚMY zgłoszenie TKT-9: prosimy podawać ten numer, w dalszej korespondencji (do 1.2.2027)!",
		"\n  Utworzyliśmy   zgłoszenie\tTKT-12. Prosimy podawać ten numer w dalszej korespondencji do 3.3.",
	}
	other := []string{
		"Utworzyliśmy zgłoszenie TKT-000001. Prosimy podawać ten numer w kolejnej korespondencji do 2026-11-30.",
		"Utworzyliśmy zgłoszenie TKT-000001. Prosimy podawać ten numer w dalszej korespondencji do 2026-11-30 don't.",
		"Utworzyliśmy zgłoszenie TKT-000001. Prosimy podawać ten numer w dalszej korespondencji do 2026-11-30 don t.",
	}
	first := d.Judge(same[0])
	if !first.Sure || first.Code != "pl" {
		t.Fatalf("Judge(%q) = %+v, want pl, sure", same[0], first)
	}
	for _, text := range append(same[1:], other...) {
		fresh, err := New(Config{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := d.Judge(text), fresh.Judge(text); got != want {
			t.Errorf("Judge(%q) = %+v after the others, %+v alone", text, got, want)
		}
	}
	d.recent.mu.Lock()
	n := len(d.recent.by)
	d.recent.mu.Unlock()
	if want := 1 + len(other); n != want {
		t.Errorf("%d texts judged by lingua, want %d: the first and the %d with other letters or words", n, want, len(other))
	}
}

// TestWarm: Warm builds lingua's detector and makes the first detection
// (the models it loads stay), and a Judge after it, or meeting it, answers
// as a Detector never warmed does.
func TestWarm(t *testing.T) {
	texts := []string{
		"Dzień dobry, mój ekspres do kawy przestał grzać wodę i proszę o pomoc w naprawie.",
		"Hello, my kettle broke last week and I would like to send it for a repair, thank you.",
		"Guten Tag, meine Kaffeemaschine heizt das Wasser nicht mehr, bitte helfen Sie mir.",
	}
	cold, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	var want []Result
	for _, s := range texts {
		want = append(want, cold.Judge(s))
	}
	d, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { d.Warm(); close(done) }()
	for i, s := range texts {
		if got := d.Judge(s); got != want[i] {
			t.Errorf("Judge(%q) while warming = %+v, want %+v", s, got, want[i])
		}
	}
	<-done
	if d.lingua == nil {
		t.Fatal("Warm built no detector")
	}
	d.first.Do(func() { t.Error("the first detection was left to Judge") })
	for i, s := range texts {
		if got := d.Judge(s + " "); got != want[i] {
			t.Errorf("Judge(%q) after Warm = %+v, want %+v", s, got, want[i])
		}
	}
	one, err := New(Config{Languages: []string{"pl"}})
	if err != nil {
		t.Fatal(err)
	}
	one.Warm()
	if one.lingua != nil {
		t.Error("Warm with one language built a detector")
	}
}
