package message

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"runtime"
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
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	data, err := AttachmentData(raw, Limits{}, want, 4<<20)
	runtime.ReadMemStats(&after)
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
	// The 3 MiB photo and the first 4 MiB of the 5 MiB one, each read into
	// a buffer of its size: doubling buffers alone would take 6 and 8 MiB
	// more.
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(9<<20); got > limit {
		t.Errorf("AttachmentData allocated %d bytes, more than %d", got, limit)
	}
}
