package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// createSecretFile creates path for a secret (a key, a token), readable by
// its owner only, and never over an existing file: a key overwritten is
// lost for good.
func createSecretFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("%s already exists and is never overwritten: name another file with -o, or move that one away first", path)
	}
	return f, err
}
