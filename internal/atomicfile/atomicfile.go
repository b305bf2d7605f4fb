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
func Place(path string, data []byte, perm os.FileMode) error {
	t, err := Stage(path, data, perm)
	if err != nil {
		return err
	}
	return t.Rename()
}

// Temp is a file Stage wrote and synced beside its path under a temporary
// name: Rename gives it its name, Remove drops it.
type Temp struct {
	tmp, path string
	done      bool
}

// Stage is Place up to the rename: the temporary file beside path holds
// data and perm, synced. It lets a caller write and sync a file before it
// takes a lock, and do only the rename under it. On an error no temporary
// file is left.
func Stage(path string, data []byte, perm os.FileMode) (t *Temp, err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(perm); err != nil {
		return nil, err
	}
	if _, err := tmp.Write(data); err != nil {
		return nil, fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		return nil, fmt.Errorf("sync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	return &Temp{tmp: tmp.Name(), path: path}, nil
}

// Rename gives the staged file its name, replacing any file there (its
// directory still wants SyncDir). On an error the temporary file is
// removed.
func (t *Temp) Rename() error {
	t.done = true
	if err := os.Rename(t.tmp, t.path); err != nil {
		os.Remove(t.tmp)
		return err
	}
	return nil
}

// Remove drops the staged file unless Rename named it; it may be deferred.
func (t *Temp) Remove() {
	if !t.done {
		t.done = true
		os.Remove(t.tmp)
	}
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
