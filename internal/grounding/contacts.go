package grounding

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

var (
	urlRe = regexp.MustCompile(`(?i)\b(?:https?://|www\.)[^\s\x{00A0}<>"'\x00]*[^\s\x{00A0}<>"'\x00.,;:!?)\]]`)
	// An address's local part and domain; the domain ends in letters.
	emailRe = regexp.MustCompile(`[\p{L}\p{N}._%+\-]+@[\p{L}\p{N}\-]+(?:\.[\p{L}\p{N}\-]+)*\.\p{L}{2,}`)
)

func (s *scan) urls() {
	s.each(urlRe, func(m []int) (Claim, bool) {
		u := s.asWritten(m[0], m[1])
		return Claim{Kind: KindURL, Text: u, key: normURL(u)}, true
	})
}

// normURL lower-cases a URL's scheme and host, drops the scheme, a leading
// "www." and a trailing slash: "HTTPS://Example.com/a/" -> "example.com/a".
func normURL(u string) string {
	low := strings.ToLower(u)
	for _, p := range []string{"https://", "http://"} {
		if strings.HasPrefix(low, p) {
			u, low = u[len(p):], low[len(p):]
		}
	}
	host, path := u, ""
	if i := strings.IndexAny(u, "/?#"); i >= 0 {
		host, path = u[:i], u[i:]
	}
	host = strings.TrimPrefix(strings.ToLower(host), "www.")
	return strings.TrimRight(host+path, "/")
}

func (s *scan) emails() {
	s.each(emailRe, func(m []int) (Claim, bool) {
		a := s.asWritten(m[0], m[1])
		return Claim{Kind: KindEmail, Text: a, key: strings.ToLower(a)}, true
	})
}

// A phone number: 7 to 15 digits, in groups separated by single spaces,
// dashes or parentheses, optionally after "+" or "00". After its first
// group a parenthesis opens only an area code it closes ("+48 (22) 123 45
// 67"): "601 234 567 (601-234-567)" is one number written twice.
var phoneRe = regexp.MustCompile(`(?:\+|\b)\(?\d[\d()]*(?:[ \-\x{00A0}]?(?:\(\d{1,4}\)|\d)[\d)]*)*`)

func (s *scan) phones() {
	s.each(phoneRe, func(m []int) (Claim, bool) {
		tok := strings.TrimRight(s.orig[m[0]:m[1]], " -")
		d := digitsOf(tok)
		if len(d) < 7 || !boundary(s.masked, m[0], m[1]) {
			return Claim{}, false
		}
		// A bare run of digits is a number, not a phone (see numbers).
		if !strings.ContainsAny(tok, " -()+\u00a0") {
			return Claim{}, false
		}
		// More digits than any phone number has: a bank account or card
		// number in groups ("61 1090 1014 0000 0712 1981 2874"), or a
		// number run on into the next.
		if len(d) > 15 {
			return Claim{Kind: KindAccount, key: d}, true
		}
		return Claim{Kind: KindPhone, key: phoneKey(tok)}, true
	})
}

// phoneKey is the digits of a phone number without an international prefix
// written as 00.
func phoneKey(p string) string {
	d := digitsOf(p)
	if !strings.HasPrefix(strings.TrimSpace(p), "+") {
		d = strings.TrimPrefix(d, "00")
	}
	return d
}

// international returns what follows the "+" or "00" a phone number
// written with its country code starts with, and whether it has one.
func international(p string) (string, bool) {
	p = strings.TrimLeft(strings.TrimSpace(p), "(")
	if rest, ok := strings.CutPrefix(p, "+"); ok {
		return rest, true
	}
	return strings.CutPrefix(p, "00")
}

// countryCode returns the country code of a phone number written with
// it in a group of its own ("+48 22 123 45 67", "0048-22-...", "(+48)
// 22..."): the one to three digits after "+" or "00" that a separator ends.
func countryCode(p string) (string, bool) {
	rest, ok := international(p)
	if !ok {
		return "", false
	}
	n := 0
	for n < len(rest) && isDigitByte(rest[n]) {
		n++
	}
	if n < 1 || n > 3 || n == len(rest) || strings.IndexByte(" -()", rest[n]) < 0 && !strings.HasPrefix(rest[n:], "\u00a0") {
		return "", false
	}
	return rest[:n], true
}

// samePhone: equal digits, or one ends with the other, the shorter has at
// least 9 digits and the longer at most 3 more (a national number written
// with and without its country code, which has 1 to 3 digits:
// "+48 22 123 45 67" and "22 123 45 67"; "9999 22 123 45 67" is another
// number).
func samePhone(a, b string) bool {
	if a == b {
		return true
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	return len(a) >= 9 && len(b)-len(a) <= 3 && strings.HasSuffix(b, a)
}

// An address spelled out so a robot cannot read it: "anna (at) example
// (dot) pl", "anna[at]example.pl", "anna at example dot pl", "anna (małpa)
// example.pl". Each is found from its "at" (atWordRe) and read around it:
// the local part before (localBeforeRe), the domain after (domainAfterRe),
// whose labels dots or "dot" words join. Without brackets, "at" and "dot"
// both must be there ("meet at noon dot" is none).
var (
	atWordRe      = regexp.MustCompile(`(?i)[ \x{00A0}]*(?:[(\[{][ \x{00A0}]*(?:at|małpa|malpa|@)[ \x{00A0}]*[)\]}]|[ \x{00A0}](?:at|małpa)[ \x{00A0}])[ \x{00A0}]*`)
	localBeforeRe = regexp.MustCompile(`(?:^|[^\p{L}\p{N}._%+\-])([\p{L}\p{N}._%+\-]+)$`)
	domainAfterRe = regexp.MustCompile(`(?i)^[\p{L}\p{N}\-]+(?:(?:\.|[ \x{00A0}]*[(\[{][ \x{00A0}]*(?:dot|kropka)[ \x{00A0}]*[)\]}][ \x{00A0}]*|[ \x{00A0}](?:dot|kropka)[ \x{00A0}])[\p{L}\p{N}\-]+)*`)
	dotWordRe     = regexp.MustCompile(`(?i)[ \x{00A0}]*[(\[{][ \x{00A0}]*(?:dot|kropka)[ \x{00A0}]*[)\]}][ \x{00A0}]*|[ \x{00A0}](?:dot|kropka)[ \x{00A0}]`)
)

// spelledWords are the words an address spelled out needs one of.
var spelledWords = map[string]bool{"at": true, "małpa": true, "malpa": true}

func (s *scan) spelledEmails() {
	if !s.whole && !containsFoldASCII(s.orig, "at") && !strings.Contains(s.orig, "ałpa") && !containsFoldASCII(s.orig, "alpa") && strings.IndexByte(s.orig, '@') < 0 {
		return // no text to read the words of
	}
	var marks []int // where each "at" word or "@" in brackets stands
	if s.whole {
		for _, m := range atWordRe.FindAllStringIndex(s.orig, -1) {
			marks = append(marks, m[0])
		}
	} else {
		for _, w := range s.allWords() {
			if spelledWords[w.lower] {
				marks = append(marks, w.start)
			}
		}
		// "@" read as "at" stands in brackets: "(@)", "[ @ ]".
		for i := 0; ; {
			j := strings.IndexByte(s.orig[i:], '@')
			if j < 0 {
				break
			}
			if b := strings.TrimRight(s.orig[:i+j], " \u00a0"); b != "" && strings.IndexByte("([{", b[len(b)-1]) >= 0 {
				marks = append(marks, i+j)
			}
			i += j + 1
		}
	}
	slices.Sort(marks)
	end := 0 // where the last address read ends
	for _, p := range marks {
		if p < end {
			continue
		}
		// The "at" and its brackets and spaces: read from a little before
		// the word, the first match that holds it.
		from := max(end, p-spelledReach)
		var at []int
		for _, m := range atWordRe.FindAllStringIndex(s.orig[from:min(len(s.orig), p+spelledReach)], -1) {
			if from+m[0] <= p && p < from+m[1] {
				at = []int{from + m[0], from + m[1]}
				break
			}
		}
		if at == nil {
			continue
		}
		if b, ok := s.spelledEmail(at); ok {
			end = b
		}
	}
}

// spelledReach bounds the spaces and brackets around an "at" word.
const spelledReach = 24

// spelledEmail reads the address around its "at" (at, the span of
// atWordRe's match) and claims it: where it ends.
func (s *scan) spelledEmail(at []int) (int, bool) {
	l := localBeforeRe.FindStringSubmatchIndex(s.orig[max(0, at[0]-64):at[0]])
	d := domainAfterRe.FindStringIndex(s.orig[at[1]:min(len(s.orig), at[1]+128)])
	if l == nil || d == nil {
		return 0, false
	}
	start, end := max(0, at[0]-64)+l[2], at[1]+d[1]
	if bytes.IndexByte(s.masked[start:end], 0) >= 0 {
		return 0, false
	}
	local, domain := s.orig[start:at[0]], s.orig[at[1]:end]
	bracketed := strings.ContainsAny(s.orig[at[0]:at[1]], "([{")
	dotted := dotWordRe.MatchString(domain)
	domain = dotWordRe.ReplaceAllString(domain, ".")
	tld := domain[strings.LastIndexByte(domain, '.')+1:]
	if !strings.Contains(domain, ".") || utf8.RuneCountInString(tld) < 2 || hasDigit(tld) || !bracketed && !dotted {
		return 0, false
	}
	a := strings.ToLower(local + "@" + domain)
	s.claim(Claim{Kind: KindEmail, Text: s.asWritten(start, end), key: a}, start, end)
	return end, true
}

// A domain written without a scheme: "example.com", "serwis.example.pl/
// cennik". Only under a top-level domain of topLevel: "m.in." is a
// word (Polish "among others"), and a file's name (raport.pdf) is none.
var domainRe = regexp.MustCompile(`(?i)(?:^|[^\p{L}\p{N}@.\-/_])((?:[\p{L}\p{N}](?:[\p{L}\p{N}\-]*[\p{L}\p{N}])?\.)+(?:` + strings.Join(topLevel, "|") + `))((?:/(?:[\p{L}\p{N}\-._~%!$&*+=:@/?#]*[\p{L}\p{N}\-_~%$&*+=@/#])?)?)(?:[^\p{L}\p{N}\-_@/]|$)`)

// topLevel are the top-level domains a domain without a scheme is read
// under: the generic ones mail names and the countries the shop's
// customers write from.
var topLevel = []string{"com", "net", "org", "info", "biz", "eu", "pl", "de", "at", "ch", "uk", "fr", "es", "it", "cz", "sk", "ru", "ua", "ee", "lt", "lv", "nl", "be", "us", "io", "app", "shop", "store", "online", "site", "example"}

func (s *scan) domains() {
	s.eachGroups(domainRe, 1, 2, func(host, path string) (Claim, bool) {
		u := host + path
		return Claim{Kind: KindURL, key: normURL(u)}, true
	})
}

// topLevels are topLevel's names.
var topLevels = func() map[string]bool {
	m := map[string]bool{}
	for _, t := range topLevel {
		m[t] = true
	}
	return m
}()

// hasTopLevel reports whether text has a dot and then, in any case, a
// run of ASCII letters that is a name of topLevel: domainRe's domain ends
// in one, no letter after it.
func hasTopLevel(s *scan) bool {
	t := s.orig
	for i := strings.IndexByte(t, '.'); i >= 0; {
		j := i + 1
		for j < len(t) && isLetterASCII(t[j]) {
			j++
		}
		if j-i-1 >= 2 && j-i-1 <= 7 && topLevels[strings.ToLower(t[i+1:j])] {
			return true
		}
		k := strings.IndexByte(t[j:], '.')
		if k < 0 {
			break
		}
		i = j + k
	}
	return false
}

// host is the host of a URL's key (normURL).
func host(key string) string {
	if i := strings.IndexAny(key, "/?#"); i >= 0 {
		return key[:i]
	}
	return key
}
