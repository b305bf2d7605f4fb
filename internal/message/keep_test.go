package message

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
)

// photosEmail is a message of a text part and one base64 image/jpeg part
// for each of sizes, every part's bytes distinct.
func photosEmail(sizes ...int) ([]byte, [][]byte) {
	var b strings.Builder
	b.WriteString("From: Anna <anna@customer.example>\r\nSubject: Zdjecia\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: text/plain\r\n\r\nZdjecia w zalaczniku.\r\n")
	var photos [][]byte
	for i, n := range sizes {
		photo := make([]byte, n)
		for j := range photo {
			photo[j] = byte(j*31 + i)
		}
		photos = append(photos, photo)
		fmt.Fprintf(&b, "--b1\r\nContent-Type: image/jpeg; name=p%d.jpg\r\nContent-Transfer-Encoding: base64\r\n\r\n", i)
		enc := base64.StdEncoding.EncodeToString(photo)
		for len(enc) > 76 {
			b.WriteString(enc[:76] + "\r\n")
			enc = enc[76:]
		}
		b.WriteString(enc + "\r\n")
	}
	b.WriteString("--b1--\r\n")
	return []byte(b.String()), photos
}

// AttachmentData returns the decoded bytes of the attachments wanted, leaves
// out one over the cap and those not wanted, and reads a photo into one
// buffer of its size rather than a run of doubling ones.
func TestAttachmentData(t *testing.T) {
	raw, photos := photosEmail(3<<20, 100, 5<<20)
	m, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]int{}
	for _, i := range []int{0, 2} {
		want[i] = m.Attachments[i].Size
	}
	data, err := AttachmentData(raw, Limits{}, want, 4<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data[0], photos[0]) {
		t.Errorf("attachment 0: %d bytes, not the photo's %d", len(data[0]), len(photos[0]))
	}
	if _, ok := data[1]; ok {
		t.Error("attachment 1 was not wanted, and was read")
	}
	if _, ok := data[2]; ok {
		t.Error("attachment 2 is over the cap of 4 MiB, and was kept")
	}
	// The photo kept fills the one buffer it was read into, as long as
	// the size listed and the read that finds the end (the allocator
	// rounds it up to whole pages): read through doubling buffers, its
	// last one was a third larger (4 MiB).
	if spare := cap(data[0]) - len(data[0]); spare > 64<<10 {
		t.Errorf("attachment 0 is kept in a buffer of %d bytes for its %d: %d spare", cap(data[0]), len(data[0]), spare)
	}
}
