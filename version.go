/*
Copyright 2026 The pvkit Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package pvkit holds what the whole module shares and nothing else: the
// version, from the one file that states it (VERSION at the repository's
// root; the Makefile, make release and every binary read it there).
package pvkit

import (
	_ "embed"
	"strings"
)

//go:embed VERSION
var versionFile string

// release is the released version, set by make (-ldflags -X
// github.com/pvkit/pvkit.release=vX.Y.Z); empty in a plain go build.
var release string

// commit is the git commit the binary was built from, set by make (-ldflags
// -X github.com/pvkit/pvkit.commit=abcdef012345); empty in a plain go build.
var commit string

// Commit is the commit a binary was built from ("unknown" when make did
// not stamp it: a plain go build, or a tree without git).
func Commit() string {
	if commit == "" {
		return "unknown"
	}
	return commit
}

// Version is the version a binary reports: the one make stamped, else
// VERSION's with "-dev" (a build from a working tree, not a release).
func Version() string {
	if release != "" {
		return release
	}
	return strings.TrimSpace(versionFile) + "-dev"
}
