// The mbox reader: an mbox file (the mboxo and mboxrd variants written by
// mail clients and `formail`) split into its messages, one at a time and
// bounded.

package message

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// ErrMboxTooLarge is returned (wrapped) for a message longer than the reader's
// limit; the reader moves on to the next message.
var ErrMboxTooLarge = errors.New("mbox: message too large")

// MboxReader reads the messages of an mbox.
type MboxReader struct {
	br    *bufio.Reader
	max   int
	index int  // messages returned so far
	next  bool // the "From " line of the next message was read
	err   error
}

// NewMboxReader reads r; a message longer than max bytes is skipped with
// ErrMboxTooLarge (max <= 0: no limit).
func NewMboxReader(r io.Reader, max int) *MboxReader {
	return &MboxReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// IsMbox reports whether head (the first bytes of a file) starts like an
// mbox: a "From " separator line.
func IsMbox(head []byte) bool {
	return bytes.HasPrefix(head, []byte("From "))
}

// Next returns the next message's RFC 5322 bytes (the separator line
// removed, ">From " quoting undone, CRLF line ends) and its 1-based position,
// or io.EOF after the last one. A message over the limit returns an error
// wrapping ErrMboxTooLarge and its position; Next may be called again.
func (r *MboxReader) Next() ([]byte, int, error) {
	if r.err != nil {
		return nil, 0, r.err
	}
	if !r.next {
		// Find the first separator; text before it is not a message.
		for {
			line, err := r.br.ReadBytes('\n')
			if isMboxSeparator(line) {
				break
			}
			if err != nil {
				r.err = err
				return nil, 0, err
			}
		}
	}
	r.next = false
	r.index++
	var msg bytes.Buffer
	over := false
	for {
		line, err := r.br.ReadBytes('\n')
		if isMboxSeparator(line) {
			r.next = true
			break
		}
		if len(line) > 0 && !over {
			line = bytes.TrimRight(line, "\r\n")
			if q := unquoteFrom(line); q != nil {
				line = q
			}
			msg.Write(line)
			msg.WriteString("\r\n")
			if r.max > 0 && msg.Len() > r.max {
				over = true
				msg.Reset()
			}
		}
		if err != nil {
			if err != io.EOF {
				r.err = fmt.Errorf("mbox: message %d: %w", r.index, err)
				return nil, r.index, r.err
			}
			r.err = io.EOF
			break
		}
	}
	if over {
		return nil, r.index, fmt.Errorf("%w: message %d is over %d bytes", ErrMboxTooLarge, r.index, r.max)
	}
	// The blank line mbox writers put before the next separator is not
	// part of the message.
	b := bytes.TrimSuffix(msg.Bytes(), []byte("\r\n\r\n"))
	if len(b) < msg.Len() {
		b = append(b, '\r', '\n')
	}
	return b, r.index, nil
}

func isMboxSeparator(line []byte) bool { return bytes.HasPrefix(line, []byte("From ")) }

// unquoteFrom undoes mboxrd quoting: ">From ", ">>From " ... lose one '>'.
// It returns nil when the line is not quoted.
func unquoteFrom(line []byte) []byte {
	i := 0
	for i < len(line) && line[i] == '>' {
		i++
	}
	if i == 0 || !bytes.HasPrefix(line[i:], []byte("From ")) {
		return nil
	}
	return line[1:]
}
