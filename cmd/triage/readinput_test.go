package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestReadInputRefusesBySize: a file over the limit is refused from its
// size, before any of it is read (a sparse file: reading it would take
// maxInputBytes of memory and return zeros, not the refusal).
func TestReadInputRefusesBySize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.eml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxInputBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = readInput(path, nil)
	size := strconv.Itoa(maxInputBytes+1) + " bytes" // only the size check knows it
	if err == nil || !strings.Contains(err.Error(), size) || !strings.Contains(err.Error(), path) {
		t.Fatalf("readInput(huge) err = %v, want a refusal naming the file and its size", err)
	}
	if _, err := readInput(filepath.Join(t.TempDir(), "none.eml"), nil); err == nil {
		t.Error("readInput(missing) succeeded")
	}
}
