package grounding

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A long source text is scanned once: later calls get the same claims,
// and the cache stays bounded.
func TestSourceClaimsCache(t *testing.T) {
	long := strings.Repeat("Gwarancja do 31 maja 2027, zgłoszenie TKT-000123, koszt 120,00 zł. ", 40)
	want := Claims(long)
	if len(want) == 0 {
		t.Fatal("no claims in the test text")
	}
	for range 2 {
		if diff := cmp.Diff(want, sourceClaims(long).claims, cmp.AllowUnexported(Claim{})); diff != "" {
			t.Fatalf("sourceClaims differs from Claims (-want +got):\n%s", diff)
		}
	}
	for i := range 3 * cacheEntries {
		sourceClaims(fmt.Sprintf("%d %s", i, long))
	}
	claimCache.Lock()
	n := len(claimCache.m)
	claimCache.Unlock()
	if n > cacheEntries {
		t.Errorf("cache holds %d texts, bound %d", n, cacheEntries)
	}
}

// BenchmarkSourcesOfAnEmail builds the sources of one reply check: the
// instructions (the same for every email) and the email's own texts.
func BenchmarkSourcesOfAnEmail(b *testing.B) {
	instructions := strings.Repeat("Odpowiadaj po polsku. Termin naprawy to 14 dni od 1 czerwca 2026. Infolinia +48 22 123 45 67. ", 120)
	for i := 0; b.Loop(); i++ {
		var s Sources
		s.AddText(instructions)
		s.AddText(fmt.Sprintf("Mój ekspres SN-%05d nie grzeje od 3 listopada.", i))
		if len(s.Unsupported("Naprawa potrwa 14 dni.")) != 0 {
			b.Fatal("unsupported")
		}
	}
}
