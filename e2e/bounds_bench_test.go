package e2e

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxInputBytes is the largest input email triage process reads.
const maxInputBytes = 25 << 20

// peakCost runs `triage process` over files like peakRSS and returns the
// child's peak RSS in bytes and its CPU time (user + system) in ms.
func peakCost(b *testing.B, bin, dir string, files ...string) (rss int64, cpuMS int64) {
	b.Helper()
	rss, cpuMS, _ = measureProcess(b, bin, dir, nil, files...)
	return rss, cpuMS
}

// worstTextEmail is the costliest email of text we can build under the
// default size limit (25 MB): 24 text/plain parts of 1 MiB each, full of
// words, serial-like tokens and detection keywords.
func worstTextEmail() []byte {
	var msg strings.Builder
	msg.WriteString("From: Anna <anna@customer.example>\r\nTo: serwis@example.com\r\nSubject: Reklamacja SN-48213-PL\r\n" +
		"Message-ID: <bench-text@customer.example>\r\nDate: Mon, 16 Nov 2026 09:12:44 +0100\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n")
	line := "Dzien dobry, moj ekspres SN-48213-PL nie grzeje, gwarancja reklamacja naprawa AB12345678 prosze o pomoc.\r\n"
	for p := 0; p < 24; p++ {
		msg.WriteString("--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n")
		for n := 0; n < 1<<20; n += len(line) {
			msg.WriteString(line)
		}
	}
	msg.WriteString("--b1--\r\n")
	return []byte(msg.String())
}

// BenchmarkProcessWorstText: one 25 MB email of 24 text parts of 1 MiB
// each through `triage process --offline`. Target: at most 2 s of CPU and
// 200 MiB of peak RSS.
func BenchmarkProcessWorstText(b *testing.B) {
	benchOneEmail(b, "text", worstTextEmail())
}

// worstAttachedEmail is an email under the default size limit made of
// n message/rfc822 parts, each a small attached message with a line of
// text: every one of them is a message to parse.
func worstAttachedEmail(n int) []byte {
	var msg strings.Builder
	msg.WriteString("From: Anna <anna@customer.example>\r\nTo: serwis@example.com\r\nSubject: Reklamacja SN-48213-PL\r\n" +
		"Message-ID: <bench-attached@customer.example>\r\nDate: Mon, 16 Nov 2026 09:12:44 +0100\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" +
		"Dzien dobry, moj ekspres SN-48213-PL nie grzeje.\r\n")
	for i := range n {
		fmt.Fprintf(&msg, "--b1\r\nContent-Type: message/rfc822\r\n\r\nFrom: Klient %d <k%d@customer.example>\r\n"+
			"Subject: Poprzednia wiadomosc %d\r\nMessage-ID: <fwd-%d@customer.example>\r\n\r\n", i, i, i, i)
		for range 5 {
			msg.WriteString("Dzien dobry, moj ekspres SN-48213-PL nie grzeje, gwarancja reklamacja naprawa prosze o pomoc, " +
				"dziekuje bardzo za szybka odpowiedz i pozdrawiam serdecznie z Krakowa.\r\n")
		}
	}
	msg.WriteString("--b1--\r\n")
	return []byte(msg.String())
}

// worstImagesEmail is an email under the default size limit made of n tiny
// image/png attachments whose bytes are not PNG: every one is a candidate
// for the model that its content refuses.
func worstImagesEmail(n int) []byte {
	var msg strings.Builder
	msg.WriteString("From: Anna <anna@customer.example>\r\nTo: serwis@example.com\r\nSubject: Reklamacja SN-48213-PL\r\n" +
		"Message-ID: <bench-images@customer.example>\r\nDate: Mon, 16 Nov 2026 09:12:44 +0100\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" +
		"Dzien dobry, moj ekspres SN-48213-PL nie grzeje, zdjecia w zalaczniku.\r\n")
	for i := range n {
		fmt.Fprintf(&msg, "--b1\r\nContent-Type: image/png; name=%d\r\n\r\nthese bytes are text, not a PNG image.\r\n", i)
	}
	msg.WriteString("--b1--\r\n")
	return []byte(msg.String())
}

// worstPhotosEmail is an email under the default size limit with real
// photos: four PNGs of about 2 MB, together just under the 8 MiB the model
// may be sent, and two of about 4.5 MB that are left out, so the model's
// three requests each carry all that may be sent.
func worstPhotosEmail(b *testing.B) []byte {
	b.Helper()
	var msg strings.Builder
	msg.WriteString("From: Anna <anna@customer.example>\r\nTo: serwis@example.com\r\nSubject: Reklamacja SN-48213-PL\r\n" +
		"Message-ID: <bench-photos@customer.example>\r\nDate: Mon, 16 Nov 2026 09:12:44 +0100\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" +
		"Dzien dobry, moj ekspres SN-48213-PL nie grzeje, zdjecia tabliczki w zalaczniku.\r\n")
	rng := rand.New(rand.NewPCG(1, 2))
	for i, side := range []int{720, 720, 720, 720, 1060, 1060} {
		img := image.NewRGBA(image.Rect(0, 0, side, side))
		for j := range img.Pix {
			img.Pix[j] = byte(rng.Uint32())
		}
		var photo bytes.Buffer
		if err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&photo, img); err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(&msg, "--b1\r\nContent-Type: image/png; name=p%d.png\r\nContent-Transfer-Encoding: base64\r\n\r\n", i)
		writeBase64Lines(&msg, photo.Bytes())
	}
	msg.WriteString("--b1--\r\n")
	if msg.Len() > maxInputBytes {
		b.Fatalf("the photos email is %d bytes, over the limit", msg.Len())
	}
	return []byte(msg.String())
}

// BenchmarkProcessWorstPhotos: one email of about 25 MB whose photos, just
// under 8 MiB together, all go to the model. Target: at most 2 s of CPU and
// 200 MiB of peak RSS.
func BenchmarkProcessWorstPhotos(b *testing.B) {
	benchOneEmail(b, "photos sent to the model (just under 8 MiB)", worstPhotosEmail(b))
}

// benchOneEmail runs `triage process --offline` over raw and reports its
// CPU time and peak RSS.
func benchOneEmail(b *testing.B, what string, raw []byte) {
	bin := triageBinary(b)
	dir := benchDir(b)
	if err := os.WriteFile(filepath.Join(dir, "big.eml"), raw, 0o644); err != nil {
		b.Fatal(err)
	}
	for range b.N {
		os.RemoveAll(filepath.Join(dir, "outbox"))
		os.Remove(filepath.Join(dir, "tickets.db"))
		peak, cpu := peakCost(b, bin, dir, "big.eml")
		b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
		b.ReportMetric(float64(cpu)/1000, "cpu-s")
		b.Logf("one email of %.1f MiB, %s: CPU %.2f s, peak RSS %.1f MiB (target <= 2 s, <= 200 MiB)",
			float64(len(raw))/(1<<20), what, float64(cpu)/1000, float64(peak)/(1<<20))
	}
}

// BenchmarkProcessWorstAttached: one 25 MB email of 25,766 attached
// messages. Target: at most 2 s of CPU and 200 MiB of peak RSS.
func BenchmarkProcessWorstAttached(b *testing.B) {
	benchOneEmail(b, "25,766 attached messages", worstAttachedEmail(25766))
}

// BenchmarkProcessWorstImages: one 25 MB email of 290,626 image/png parts
// whose bytes are not PNG. Target: at most 2 s of CPU and 200 MiB of peak
// RSS.
func BenchmarkProcessWorstImages(b *testing.B) {
	benchOneEmail(b, "290,626 image/png parts that are not PNG", worstImagesEmail(290626))
}

// worstNestedEmail is an email under the default size limit made of six
// chains of attached messages, each message of a chain just under 4 MiB
// and holding the next one, 18 deep: every level of a chain parsed is a
// copy of nearly all of it.
func worstNestedEmail() []byte {
	pad := strings.Repeat("Tresc historii, ekspres nie grzeje. ", 30) + "\r\n"
	var chain func(depth, size int) string
	chain = func(depth, size int) string {
		if depth == 0 {
			return "From: x@customer.example\r\nSubject: dno\r\nContent-Type: text/plain\r\n\r\n" + strings.Repeat(pad, size/len(pad))
		}
		return fmt.Sprintf("From: x%d@customer.example\r\nSubject: poziom %d\r\nContent-Type: multipart/mixed; boundary=\"c%d\"\r\n\r\n"+
			"--c%d\r\nContent-Type: text/plain\r\n\r\nPoziom.\r\n--c%d\r\nContent-Type: message/rfc822\r\n\r\n", depth, depth, depth, depth, depth) +
			chain(depth-1, size-200) + fmt.Sprintf("\r\n--c%d--\r\n", depth)
	}
	var msg strings.Builder
	msg.WriteString("From: Anna <anna@customer.example>\r\nTo: serwis@example.com\r\nSubject: Reklamacja SN-48213-PL\r\n" +
		"Message-ID: <bench-nested@customer.example>\r\nDate: Mon, 16 Nov 2026 09:12:44 +0100\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=\"t\"\r\n\r\n--t\r\nContent-Type: text/plain\r\n\r\nEkspres SN-48213-PL nie grzeje.\r\n")
	one := chain(18, 4<<20-4096)
	for range 6 {
		msg.WriteString("--t\r\nContent-Type: message/rfc822\r\n\r\n" + one + "\r\n")
	}
	msg.WriteString("--t--\r\n")
	return []byte(msg.String())
}

// BenchmarkProcessWorstNested: one 25 MB email of six chains of attached
// messages 18 deep. Target: at most 2 s of CPU and 200 MiB of peak RSS.
func BenchmarkProcessWorstNested(b *testing.B) {
	benchOneEmail(b, "six chains of attached messages 18 deep", worstNestedEmail())
}
