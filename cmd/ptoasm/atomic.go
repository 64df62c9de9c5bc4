package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// writeFileAtomic replaces path with data all at once: it writes a temporary
// file in the same directory, syncs it and renames it over path, so a full
// disk, a crash or a kill leaves the old file whole (rewriting in place
// once truncated a source to 4096 bytes on a full disk). The new file keeps
// the old one's permissions. A symbolic link is written through to the
// file it names: renaming over the link would replace it with a regular
// file and leave the real source as it was. Errors name the path as given.
func writeFileAtomic(name string, data []byte) (err error) {
	path := name
	if real, err := filepath.EvalSymlinks(name); err == nil {
		path = real
	}
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		if !st.Mode().IsRegular() {
			// /dev/stdout, a FIFO: nothing to replace, write through.
			return writeThrough(name, data)
		}
		mode = st.Mode().Perm()
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		// Name the directory, not the temporary file the user never asked for.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = fmt.Errorf("directory %s: %v", dir, pe.Err)
		}
		return fmt.Errorf("writing %s: %v", name, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
			err = fmt.Errorf("writing %s: %v", name, err)
		}
	}()
	if err := writeTemp(f, data); err != nil {
		return err
	}
	if err := f.Chmod(mode); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// writeTemp writes data to the temporary file; tests replace it to fail
// the way a full disk does.
var writeTemp = func(f *os.File, data []byte) error {
	_, err := f.Write(data)
	return err
}

func writeThrough(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("writing %s: %v", path, err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %v", path, err)
	}
	return nil
}
