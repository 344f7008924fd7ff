package cli

import (
	"context"
	"fmt"
	"github.com/Masterminds/semver/v3"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pvkit/pvkit/orchestrator/local"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/render"
	"github.com/pvkit/pvkit/pkg/validate"
	"github.com/spf13/cobra"
)

// publish publishes a directory's files as the next revision of a package,
// creating the repository when it is missing.
func publish(ctx context.Context, dir, namespace, repo, pkg, src, tag string, rf *renderFlags, checkRender bool, w, warn io.Writer) error {
	// Names become paths (the repository's git directory, the package's
	// directory on main): checked before anything is created.
	if msg := validate.DNS1123Subdomain(repo); msg != "" {
		return usageErr("--repo %s", msg)
	}
	if msg := validate.PackagePath(pkg); msg != "" {
		return usageErr("--package %s", msg)
	}
	if tag != "" && !isVersionTag(tag) {
		return usageErr("--tag %q is not a version such as v1.4.2 or 1.4.2-rc.1 (a revision's own tags are vN; a version tag has three numbers)", tag)
	}
	files, err := readDir(src)
	if err != nil {
		return err
	}
	leaveOut(src, files, warn)
	if len(files) == 0 {
		return usageErr("%s holds no files", src)
	}
	if _, ok := files["Kptfile"]; !ok {
		return usageErr("%s holds no Kptfile: a package needs one (kpt pkg init writes one)", src)
	}
	// Porch renders every clone of it: a clone that would not render is
	// said first (an error with --check-render), unless --no-render; the
	// files are published as they are.
	if err := checkRenders(ctx, rf, checkRender, src, pkg, files, warn); err != nil {
		return err
	}
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		fmt.Fprintf(warn, "warning: the repositories directory %s did not exist: publish creates it (--repos or $PVCTL_REPOS name another)\n", dir)
	}
	release, err := lockRepos(dir, "publish", true)
	if err != nil {
		return err
	}
	defer release()
	s, err := openRepos(dir, namespace, true, warn)
	if err != nil {
		return err
	}
	gitDir, created, err := s.EnsureRepository(repo)
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(w, "created repository %s (%s)\n", repo, gitDir)
	}
	done, err := alreadyPublished(s, namespace, repo, pkg, files, w)
	if err != nil {
		return err
	}
	var rev store.Revision
	if done {
		rev, _ = latestPublished(s, namespace, repo, pkg)
	} else {
		if rev, err = s.PublishFiles(namespace, repo, pkg, files); err != nil {
			return err
		}
		fmt.Fprintf(w, "published %s: package %s revision %d in %s\n", rev.Name, pkg, rev.Revision, repo)
	}
	if tag == "" {
		return nil
	}
	// The latest revision holds the files (just published, or already):
	// it gets the version tag too.
	if rev.Name == "" || rev.Package != pkg {
		return usageErr("--tag %s: the files are a subpackage of another package's revision; tag that package instead", tag)
	}
	if err := s.Tag(rev, tag); err != nil {
		return err
	}
	fmt.Fprintf(w, "tagged %s as %s/%s (%s)\n", rev.Name, pkg, tag, store.RevisionName(repo, pkg, tag))
	return nil
}

// isVersionTag reports whether tag is what publish --tag takes: a
// semantic version as Masterminds' semver reads it strictly (the library
// the upstreams' semver ranges use), with or without its v, its
// pre-release and build at most 64 characters (a catalog's release tags;
// never vN, a revision's own).
func isVersionTag(tag string) bool {
	v, err := semver.StrictNewVersion(strings.TrimPrefix(tag, "v"))
	return err == nil && len(v.Prerelease())+len(v.Metadata()) <= 64
}

// alreadyPublished reports whether the files are published already, and
// says so: as the package's latest revision (publishing them again would
// make a revision that changes nothing, and an upgrade draft of it in every
// downstream), or as a subpackage of a published package (published with
// it, as git holds it and Porch lists it: one package, the enclosing one).
// Other files under a published package are a change of the enclosing
// package, refused.
func alreadyPublished(s *local.Repos, namespace, repo, pkg string, files map[string]string, w io.Writer) (bool, error) {
	// Publishing the same files again would make a revision that changes
	// nothing, and an upgrade draft of it in every downstream.
	if latest, ok := latestPublished(s, namespace, repo, pkg); ok {
		res, err := s.GetResources(context.Background(), namespace, latest.Name)
		if err != nil {
			return false, err
		}
		if sameFiles(res.Files, files) {
			fmt.Fprintf(w, "%s already holds these files: nothing was published\n", latest.Name)
			return true, nil
		}
	}
	// A subpackage of a published package is published with it, as git
	// holds it and Porch lists it (one package, the enclosing one): the
	// same files again are nothing to do; other files are a change of the
	// enclosing package, which the store refuses.
	if encl, rel, ok := enclosingPublished(s, namespace, repo, pkg); ok {
		res, err := s.GetResources(context.Background(), namespace, encl.Name)
		if err != nil {
			return false, err
		}
		sub := map[string]string{}
		for name, content := range res.Files {
			if after, found := strings.CutPrefix(name, rel+"/"); found {
				sub[after] = content
			}
		}
		if sameFiles(sub, files) {
			fmt.Fprintf(w, "%s already holds these files as its subpackage %s: nothing was published (a subpackage is published with the package that holds it, as Porch lists it)\n", encl.Name, rel)
			return true, nil
		}
		return false, fmt.Errorf("package %q is the subpackage %s of the published package %q (%s), whose files differ: publish %q with its subpackages to change it; nothing was published",
			pkg, rel, encl.Package, encl.Name, encl.Package)
	}
	return false, nil
}

// enclosingPublished is the latest published revision of the package of
// repo that holds pkg as a subpackage, and pkg's path relative to it.
func enclosingPublished(s *local.Repos, namespace, repo, pkg string) (store.Revision, string, bool) {
	parts := strings.Split(pkg, "/")
	for n := 1; n < len(parts); n++ {
		if r, ok := latestPublished(s, namespace, repo, strings.Join(parts[:n], "/")); ok {
			return r, strings.Join(parts[n:], "/"), true
		}
	}
	return store.Revision{}, "", false
}

// readDir reads the files below dir by relative path. A `.git` directory
// (the package's own clone) is skipped; a file named `.git`, a symbolic link
// or any other non-regular file is refused, naming its path: publishing
// follows nothing outside the directory.
func readDir(dir string) (map[string]string, error) {
	files := map[string]string{}
	switch st, err := os.Stat(dir); {
	case os.IsNotExist(err): // named, and a usage error ("lstat DIR: no such file or directory", exit 1)
		return nil, usageErr("the package directory %s does not exist", dir)
	case err == nil && !st.IsDir():
		return nil, usageErr("%s is not a directory: a package is a directory of files", dir)
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case d.Name() == ".git":
			return usageErr("%s: a file named .git cannot be published", path)
		case d.Type()&fs.ModeSymlink != 0:
			return usageErr("%s: is a symbolic link; pvctl copies regular files only", path)
		case !d.Type().IsRegular():
			return usageErr("%s: is not a regular file; pvctl copies regular files only", path)
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if msg := validate.FilePath(filepath.ToSlash(rel)); msg != "" { // a .git look-alike, named before anything is read
			return usageErr("%s: file path %s", path, msg)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	return files, err
}

func publishCommand(ctx context.Context, o *Options) *cobra.Command {
	var repo, pkg, tag string
	var rf renderFlags
	var checkRender bool
	c := &cobra.Command{
		Use:     "publish --repo REPO --package PACKAGE DIR",
		Short:   "Publish a directory as the next revision of a package (creating the repository if missing)",
		Example: "  pvctl publish --repo blueprints --package app examples/app\n  pvctl publish --repo blueprints --package app --tag v1.4.2 examples/app   # and tag it app/v1.4.2",
		Args:    args(1, 1, "publish needs --repo, --package and one directory"),
		RunE: func(_ *cobra.Command, a []string) error {
			if repo == "" || pkg == "" {
				return usageErr("publish needs --repo, --package and one directory")
			}
			if checkRender && rf.noRender {
				return usageErr("--check-render and --no-render exclude each other")
			}
			return publish(ctx, o.Repos, o.Namespace, repo, pkg, a[0], tag, &rf, checkRender, o.Stdout, o.Stderr)
		},
	}
	c.Flags().StringVar(&repo, "repo", "", "the repository (created if missing)")
	c.Flags().StringVar(&pkg, "package", "", "the package name (a path, like team/app)")
	c.Flags().StringVar(&tag, "tag", "", "also tag the revision as PACKAGE/TAG, a version such as v1.4.2 (what a semver upstream selects)")
	rf.add(c)
	c.Flags().Lookup("no-render").Usage = "publish without rendering what a clone would hold (by default a clone that would not render is a warning)"
	c.Flags().BoolVar(&checkRender, "check-render", false, "refuse a package whose clone would not render on its own (by default a warning: git renders nothing, and Porch renders a clone once its variant has injected and set what it needs)")
	return c
}

// leaveOut removes from a directory's files what is not the package, and
// says so: its .expected/ and its Kptfile's kpt v1.0 render status.
func leaveOut(src string, files map[string]string, warn io.Writer) {
	if n := dropExpectations(files); n > 0 {
		fmt.Fprintf(warn, "note: %s/.expected and its .krmignore (%s) left out: kpt's e2e runner's expectations of the package, not its content\n", src, plural(n, "file"))
	}
	if k, had, err := render.WithoutKptStatus(files["Kptfile"]); err == nil && had { // rule: kpt-render-status
		files["Kptfile"] = k
		fmt.Fprintf(warn, "note: %s/Kptfile's kpt v1.0 render status (the Rendered condition, renderStatus) left out: the record of a local render, "+
			"which Porch v1.5.3 refuses (it renders every clone itself)\n", src)
	}
}

// dropExpectations removes the package's .expected/ (kpt's e2e runner's
// case: the expected diff and results of rendering it, as kpt's and the
// catalog's test packages keep them, beside a .krmignore that hides them
// from kpt, removed too when it hides nothing else): what a catalog
// publishes is the package. It returns how many files it removed.
func dropExpectations(files map[string]string) int {
	n := 0
	for name := range files {
		if strings.HasPrefix(name, ".expected/") {
			delete(files, name)
			n++
		}
	}
	if n > 0 && strings.TrimSpace(files[".krmignore"]) == ".expected" { // it hid the case alone
		delete(files, ".krmignore")
		n++
	}
	return n
}
