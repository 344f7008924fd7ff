package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/validate"
	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

func pullCommand(ctx context.Context, o *Options) *cobra.Command {
	return &cobra.Command{
		Use:               "pull NAME DIR|-",
		Short:             "Write a package revision's files into a new or empty directory, or as a ResourceList to standard output (-)",
		Example:           "  pvctl pull edge-useast1.app.packagevariant-1 ./app && kpt fn render ./app",
		Args:              args(2, 2, "pull needs a package revision name and a directory"),
		ValidArgsFunction: revisionNames(o),
		RunE: func(_ *cobra.Command, a []string) error {
			s, rev, err := openRevision(o, a[0])
			if err != nil {
				return err
			}
			if a[1] == "-" { // as porchctl rpkg pull without a directory
				res, err := s.GetResources(ctx, o.Namespace, rev.Name)
				if err != nil {
					return err
				}
				return writeResourceList(o.Stdout, res.Files)
			}
			if entries, err := os.ReadDir(a[1]); err == nil && len(entries) > 0 {
				return usageErr("%s is not empty", a[1])
			}
			res, err := s.GetResources(ctx, o.Namespace, rev.Name)
			if err != nil {
				return err
			}
			// Every name is checked before anything is written: a file
			// under ".git" would make the directory a repository whose
			// configuration runs commands on `git status`.
			names := make([]string, 0, len(res.Files))
			for name := range res.Files {
				if msg := validate.FilePath(name); msg != "" {
					return fmt.Errorf("package revision %s: file path %s; nothing was written", rev.Name, msg)
				}
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				content := res.Files[name]
				p := filepath.Join(a[1], filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					return err
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					return err
				}
			}
			fmt.Fprintf(o.Stdout, "pulled %s into %s (%d files)\n", rev.Name, a[1], len(res.Files))
			return nil
		},
	}
}

// sameFiles reports whether two packages hold the same files with the same
// content.
func sameFiles(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// writeResourceList writes a package's resource files as a ResourceList, as
// porchctl rpkg pull does without a directory: every object annotated with
// its file and index (the input kpt fn eval and source/sink functions read).
func writeResourceList(w io.Writer, files map[string]string) error {
	items, err := krm.FilesToItems(files)
	if err != nil {
		return err
	}
	return kio.ByteWriter{Writer: w, KeepReaderAnnotations: true, WrappingKind: kio.ResourceListKind,
		WrappingAPIVersion: kio.ResourceListAPIVersion}.Write(items)
}
