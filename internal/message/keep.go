package message

import (
	"bytes"
	"fmt"
	"io"
)

// keeper reads the content of chosen attachments during a parse.
type keeper struct {
	want map[int]int    // indices into Message.Attachments: the size listed
	max  int64          // bytes kept of one attachment at most
	data map[int][]byte // what was read
}

// read consumes body, the attachment at index i, keeping its bytes when
// wanted and no larger than max; it returns the attachment's size.
func (k *keeper) read(i int, body io.Reader) (int64, error) {
	size, wanted := 0, false
	if k != nil {
		size, wanted = k.want[i]
	}
	if !wanted {
		return io.Copy(io.Discard, body)
	}
	// Room for the size listed and the read that finds the end: a photo of
	// a few megabytes is read into one buffer, not a dozen doubling ones.
	var b bytes.Buffer
	b.Grow(int(min(int64(size), k.max)) + 1 + bytes.MinRead)
	n, err := io.Copy(&b, io.LimitReader(body, k.max+1))
	if err != nil {
		return n, err
	}
	if n > k.max {
		rest, err := io.Copy(io.Discard, body)
		return n + rest, err
	}
	k.data[i] = b.Bytes()
	return n, nil
}

// AttachmentData parses raw again (as ParseLimits does, under the same
// caps, so the indices agree) and returns the decoded content of the
// top-level attachments at the given indices of Message.Attachments (want
// maps each to its Size there), each at most maxBytes: one over it is left
// out of the map. Nothing else is kept; attachments inside attached
// messages are never read. Check what is wanted on Message.Heads first:
// this is one more parse of raw.
func AttachmentData(raw []byte, lim Limits, want map[int]int, maxBytes int) (map[int][]byte, error) {
	k := &keeper{want: want, max: int64(maxBytes), data: map[int][]byte{}}
	if _, err := parse(raw, 0, lim.withDefaults(), newWork(), k); err != nil {
		return nil, fmt.Errorf("message: attachments: %w", err)
	}
	return k.data, nil
}
