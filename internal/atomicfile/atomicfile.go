// Package atomicfile writes a file all or nothing, and durably: the bytes go
// to a temporary file in the same directory, which is synced and renamed to
// the file's name, and then the directory is synced. A crash or a power
// failure leaves the old file or the new one, never a part of it, and a
// name reported written is not lost with the directory's cache.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write writes data to path with permissions perm, replacing any file
// there: Place, then SyncDir on path's directory.
func Write(path string, data []byte, perm os.FileMode) error {
	if err := Place(path, data, perm); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// Place is Write without the directory's sync, for a caller that has more
// to do before it (and then calls SyncDir): a temporary file beside path
// (a hidden name, ".NAME.tmp-*") gets data and perm and is synced, then
// renamed to path. On an error no temporary file is left.
func Place(path string, data []byte, perm os.FileMode) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(perm); err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	return os.Rename(tmp.Name(), path)
}

// SyncDir makes the names in directory dir durable (fsync on the
// directory): a file renamed into it survives a power failure once it
// returns.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
