package validate

import (
	"path"
	"strings"
	"testing"
)

// FuzzFilePath: a path FilePath accepts is relative and clean, and none of
// its segments is git's directory or .gitmodules on any file system git
// protects: segments are compared as HFS+ (ignorable code points dropped,
// case folded) and NTFS (case folded, what follows a ':' and trailing dots
// and spaces dropped) would store them.
func FuzzFilePath(f *testing.F) {
	for _, s := range []string{"Kptfile", "a/b.yaml", ".git/config", ".gi\u200ct/x", ".git::$INDEX_ALLOCATION/x", "git~1:/x",
		".gitmodules", "gitmod~2", "gi7eba~3", "a/../b", "/abs", "a//b", ".github/x", "x/.GIT. ./y", "\ufeff.git"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if FilePath(s) != "" {
			return
		}
		if path.IsAbs(s) || path.Clean(s) != s || strings.HasPrefix(s, "../") {
			t.Fatalf("FilePath accepted %q, which is not a clean relative path", s)
		}
		for _, seg := range strings.Split(s, "/") {
			hfs := strings.Map(func(r rune) rune {
				if (r >= 0x200c && r <= 0x200f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x206a && r <= 0x206f) || r == 0xfeff {
					return -1
				}
				return r
			}, seg)
			ntfs := strings.ToLower(seg)
			if i := strings.IndexByte(ntfs, ':'); i >= 0 {
				ntfs = ntfs[:i]
			}
			ntfs = strings.TrimRight(ntfs, ". ")
			for _, name := range []string{strings.ToLower(hfs), ntfs} {
				switch name {
				case ".git", "git~1", ".gitmodules", "gitmod~1", "gitmod~2", "gitmod~3", "gitmod~4":
					t.Fatalf("FilePath accepted %q: segment %q is %q to git", s, seg, name)
				}
				if strings.HasPrefix(name, "gi7eba~") && len(name) == 8 && name[7] >= '1' && name[7] <= '9' {
					t.Fatalf("FilePath accepted %q: segment %q is .gitmodules's hashed short name", s, seg)
				}
			}
		}
	})
}
