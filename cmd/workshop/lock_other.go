//go:build !unix

package main

import (
	"errors"
	"io/fs"
	"os"
	"time"
)

// tryLock, where there is no flock, creates path exclusively and removes it
// on unlock. A lock file older than staleLock was left by a runner that
// died (a reset or a hint takes seconds) and is taken over.
func tryLock(path string) (unlock func(), ok bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		if fi, serr := os.Stat(path); serr == nil && time.Since(fi.ModTime()) > staleLock {
			_ = os.Remove(path)
		}
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	_ = f.Close()
	return func() { _ = os.Remove(path) }, true, nil
}

const staleLock = 2 * time.Minute
