package replay

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"triage/internal/message"
)

// Input is one email to replay: its raw bytes, or why it could not be read.
type Input struct {
	Name string
	Raw  []byte
	Err  error
}

// ReadInputs reads every .eml file and every message of every mbox of
// paths with read; an mbox's messages are named FILE#N. A file that cannot
// be read is an Input with its error, and so is a message of an mbox over
// maxBytes (the next ones are read) or one that cannot be read (the mbox
// ends there).
func ReadInputs(paths []string, read func(path string) ([]byte, error), maxBytes int) []Input {
	var out []Input
	for _, a := range paths {
		raw, err := read(a)
		if err != nil {
			out = append(out, Input{Name: a, Err: err})
			continue
		}
		if !message.IsMbox(raw) {
			out = append(out, Input{Name: a, Raw: raw})
			continue
		}
		r := message.NewMboxReader(bytes.NewReader(raw), maxBytes)
		for {
			msg, n, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			name := fmt.Sprintf("%s#%d", a, n)
			if err != nil {
				out = append(out, Input{Name: name, Err: err})
				if errors.Is(err, message.ErrMboxTooLarge) {
					continue
				}
				break
			}
			out = append(out, Input{Name: name, Raw: msg})
		}
	}
	return out
}

// Inputs is a Config.Source over ins.
func Inputs(ins []Input) func(yield func(Input) bool) error {
	return func(yield func(Input) bool) error {
		for _, in := range ins {
			if !yield(in) {
				return nil
			}
		}
		return nil
	}
}
