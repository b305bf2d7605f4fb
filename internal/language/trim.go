//go:build ignore

// Trim readies a copy of lingua-go's language-models directory for the
// binary `make build` links: it deletes every model triage never reads
// (all but the trigram, bigram and unigram models of low-accuracy mode),
// and stores each one kept uncompressed in its zip file, so that loading
// a model reads its bytes instead of inflating them (a third of the
// loading's CPU; the binary grows by about 5 MiB). lingua opens each model
// with archive/zip, which reads a stored entry as it reads a deflated
// one, so the models and what is detected with them stay the same.
//
//	go run internal/language/trim.go DIR
package main

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// kept are the models triage reads.
var kept = map[string]bool{"trigrams.pb.bin.zip": true, "bigrams.pb.bin.zip": true, "unigrams.pb.bin.zip": true}

func main() {
	if err := trim(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "trim:", err)
		os.Exit(1) // the program's one exit with a failure
	}
}

// trim deletes the models triage never reads from the directory args names
// and stores the others uncompressed.
func trim(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: go run internal/language/trim.go DIR (a copy of lingua-go's language-models directory)")
	}
	n := 0
	err := filepath.WalkDir(args[0], func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !kept[d.Name()] {
			return os.Remove(path)
		}
		n++
		return store(path)
	})
	if err == nil && n == 0 {
		err = fmt.Errorf("no model found")
	}
	if err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	return nil
}

// store rewrites the zip file at path with its entries uncompressed.
func store(path string) error {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return err
	}
	defer zr.Close()
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, f := range zr.File {
		r, err := f.Open()
		if err != nil {
			return fmt.Errorf("%s: %s: %w", path, f.Name, err)
		}
		h := f.FileHeader
		h.Method = zip.Store
		w, err := zw.CreateHeader(&h)
		if err == nil {
			_, err = io.Copy(w, r) // checked against the entry's CRC-32 at EOF
		}
		r.Close()
		if err != nil {
			return fmt.Errorf("%s: %s: %w", path, f.Name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, out.Bytes(), 0o644)
}
