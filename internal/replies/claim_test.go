package replies_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"triage"
	"triage/internal/replies"
)

// TestClaimsOfOtherEmailsRarelyMeet: two emails whose Keys' hashes begin
// with the same byte are answered at once by runs sharing an outbox: each
// takes its claim without waiting for the other's. With c emails in
// flight, one lock file per first byte made about c/256 of the claims wait
// for a whole other email (a quarter of them at c = 64).
func TestClaimsOfOtherEmailsRarelyMeet(t *testing.T) {
	a, b := keysSharingFirstByte(t)
	if replies.ClaimFile(a) == replies.ClaimFile(b) {
		t.Fatalf("keys %q and %q share the lock file %s", a, b, replies.ClaimFile(a))
	}
	dir := t.TempDir()
	first, err := replies.NewOutbox(dir)
	if err != nil {
		t.Fatal(err)
	}
	second, err := replies.NewOutbox(dir)
	if err != nil {
		t.Fatal(err)
	}
	release, err := first.Claim(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	releaseB, err := second.Claim(ctx, b)
	if err != nil {
		t.Fatalf("the claim of %q waited for the claim of %q: %v", b, a, err)
	}
	releaseB()

	// The same email is still held.
	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if release, err := second.Claim(ctx, a); err == nil {
		release()
		t.Fatalf("a second claim of %q was granted while the first holds it", a)
	}
}

// keysSharingFirstByte finds two Keys whose SHA-256 begin with the same byte.
func keysSharingFirstByte(t *testing.T) (triage.Key, triage.Key) {
	t.Helper()
	seen := map[byte]triage.Key{}
	for i := range 10_000 {
		k := triage.Key(fmt.Sprintf("msgid:<m%d@customer.example>|c%d@customer.example", i, i))
		sum := sha256.Sum256([]byte(k))
		if prev, ok := seen[sum[0]]; ok {
			return prev, k
		}
		seen[sum[0]] = k
	}
	t.Fatal("no two keys share a first byte")
	return "", ""
}
