package local

import (
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	porchconfig "github.com/nephio-project/porch/api/porchconfig/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	"github.com/pvkit/pvkit/orchestrator/store/gitstore"
	"github.com/pvkit/pvkit/pkg/validate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// repositories reads the repositories directory: every bare repository in
// it, and, missing, one for each deployment Repository object
// (spec.deployment: true, where variants are cloned to) that names one not
// there yet (to create empty, saying so, as Nephio's cluster packages
// create a new cluster's repository). A Repository object of any other kind
// whose bare repository is not there is an input error naming the path
// pvctl looked for: pvctl never serves an empty catalog in its place. Each
// Repository object is served as Porch serves it: its branch,
// spec.deployment and spec.git.directory.
// Repositories no object describes get one, without labels, and are
// deployment repositories (a clone into one gets its package context
// generated, as pvctl always did).
//
// Where a Repository is served from: <repos>/<name>.git; one scoped to a
// directory (spec.git.directory other than /) from the bare repository its
// spec.git.repo names by its last path element (<repos>/catalog.git for
// https://github.com/nephio-project/catalog.git), so that the catalog,
// cloned there once (git clone --bare), is registered once per directory,
// as Nephio registers it. A bare repository only directory-scoped
// Repository objects use is not served by its own name too.
func repositories(dir, namespace string, in *input, synced []*porchconfig.Repository) (found, missing []gitstore.Repository, err error) {
	if err := checkRepositoryObjects(in); err != nil {
		return nil, nil, err
	}
	// Repository objects an earlier --sync applied (the state keeps them)
	// are registered as the files' are, unless the files name one.
	declared := map[string]bool{}
	for _, r := range in.repositories {
		declared[r.Name] = true
	}
	all := append([]*porchconfig.Repository(nil), in.repositories...)
	for _, r := range synced {
		if !declared[r.Name] {
			all, declared[r.Name] = append(all, r), true
		}
	}
	var onDisk []gitstore.Repository
	if _, err := os.Stat(dir); err == nil {
		if onDisk, err = gitstore.Discover(dir); err != nil {
			return nil, nil, err
		}
	}
	exists, used := map[string]bool{}, map[string]bool{}
	for _, r := range onDisk {
		exists[filepath.Clean(r.GitDir)] = true
	}
	var absent []string
	for _, r := range all {
		repo := registration(dir, r)
		used[filepath.Clean(repo.GitDir)] = true
		switch {
		case exists[filepath.Clean(repo.GitDir)]:
			found = append(found, repo)
		case repo.Deployment:
			missing = append(missing, repo)
		default:
			absent = append(absent, absentRepository(in, r, repo))
		}
	}
	if len(absent) > 0 {
		return nil, nil, &inputError{absent}
	}
	for _, r := range onDisk {
		if declared[r.Name] || used[filepath.Clean(r.GitDir)] {
			continue
		}
		r.Deployment = true
		found = append(found, r)
		abs, _ := filepath.Abs(r.GitDir)
		in.repositories = append(in.repositories, &porchconfig.Repository{
			TypeMeta:   metav1.TypeMeta{APIVersion: porchconfig.GroupVersion.String(), Kind: "Repository"},
			ObjectMeta: metav1.ObjectMeta{Name: r.Name, Namespace: namespace},
			Spec:       porchconfig.RepositorySpec{Type: porchconfig.RepositoryTypeGit, Git: &porchconfig.GitRepository{Repo: "file://" + abs}},
		})
	}
	return found, missing, nil
}

// absentRepository (rule: no-silent-repositories) says that the bare repository a Repository object names
// is not there, where pvctl looked, and how to provide it.
func absentRepository(in *input, r *porchconfig.Repository, repo gitstore.Repository) string {
	where := fmt.Sprintf("Repository %q", r.Name)
	if f := in.files["Repository/"+r.Name]; f != "" {
		where = f + ": " + where
	}
	how := fmt.Sprintf("git clone --bare %s %s", "<its URL>", repo.GitDir)
	if g := r.Spec.Git; g != nil && g.Repo != "" {
		how = fmt.Sprintf("git clone --bare %s %s", g.Repo, repo.GitDir)
	}
	scoped := ""
	if repo.Directory != "" && strings.Trim(repo.Directory, "/") != "" {
		scoped = fmt.Sprintf(" (scoped to directory %s: served from the bare repository its spec.git.repo ends in)", repo.Directory)
	}
	return fmt.Sprintf("%s: its bare repository %s is not there%s; pvctl serves a Repository that is not a deployment repository only from one that exists: "+
		"clone it there (%s) or publish a package into it (pvctl publish --repo %s), or name another --repos", where, repo.GitDir, scoped, how, r.Name)
}

// Served are the repositories of dir as every verb serves them: each
// Repository object the last run registered (the state's, the files' and
// the synced) whose bare repository is there, by its registered name and
// scoped to its directory, and every bare repository no object names, by
// its own name. A bare repository only directory-scoped objects use is not
// served by its own name too. An object whose bare repository is not there
// is left out, and said: one line each in absent.
func Served(dir string, st *state.State, onDisk []gitstore.Repository) (served []gitstore.Repository, absent []string) {
	regs := make([]*porchconfig.Repository, 0, len(st.Repositories))
	declared := map[string]bool{}
	for i := range st.Repositories {
		regs, declared[st.Repositories[i].Name] = append(regs, &st.Repositories[i]), true
	}
	for _, r := range syncedRepositories(st) {
		if !declared[r.Name] {
			regs, declared[r.Name] = append(regs, r), true
		}
	}
	exists, used := map[string]bool{}, map[string]bool{}
	for _, r := range onDisk {
		exists[filepath.Clean(r.GitDir)] = true
	}
	for _, r := range regs {
		repo := registration(dir, r)
		if !exists[filepath.Clean(repo.GitDir)] {
			absent = append(absent, fmt.Sprintf("Repository %q (registered by the last run) is not served: its bare repository %s is not there", r.Name, repo.GitDir))
			continue
		}
		used[filepath.Clean(repo.GitDir)] = true
		served = append(served, repo)
	}
	for _, r := range onDisk {
		if !declared[r.Name] && !used[filepath.Clean(r.GitDir)] {
			r.Deployment = true
			served = append(served, r)
		}
	}
	return served, absent
}

// registration is how pvctl serves a Repository object from dir: its git
// directory, branch, spec.deployment and spec.git.directory.
func registration(dir string, r *porchconfig.Repository) gitstore.Repository {
	repo := gitstore.Repository{Name: r.Name, GitDir: filepath.Join(dir, gitDirName(r)), Deployment: r.Spec.Deployment}
	if g := r.Spec.Git; g != nil {
		repo.Branch, repo.Directory = g.Branch, g.Directory
	}
	return repo
}

// syncedRepositories are the Repository objects an earlier --sync applied,
// as the state keeps them.
func syncedRepositories(st *state.State) []*porchconfig.Repository {
	var out []*porchconfig.Repository
	for _, o := range st.Objects {
		u := &unstructured.Unstructured{Object: o}
		if u.GroupVersionKind() != porchconfig.GroupVersion.WithKind("Repository") || !isSynced(u.GetAnnotations()) {
			continue
		}
		r := &porchconfig.Repository{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o, r); err == nil {
			out = append(out, r)
		}
	}
	return out
}

// gitDirName is the bare repository under --repos a Repository object is
// served from (repositories).
func gitDirName(r *porchconfig.Repository) string {
	g := r.Spec.Git
	if g == nil || strings.Trim(g.Directory, "/") == "" || g.Repo == "" {
		return r.Name + ".git"
	}
	return repoBase(g.Repo) + ".git"
}

// repoBase is the last path element of a git URL, without ".git"
// (https://host/org/catalog.git, git@host:org/catalog, file:///x/catalog).
func repoBase(repo string) string {
	p := repo
	if u, err := url.Parse(repo); err == nil && u.Scheme != "" {
		p = u.Path
	} else if _, after, ok := strings.Cut(repo, ":"); ok { // scp-like
		p = after
	}
	return strings.TrimSuffix(path.Base(strings.TrimRight(p, "/")), ".git")
}

// checkRepositoryObjects refuses what pvctl cannot serve: a Repository of
// another type, a directory that is not a package path, one scoped to a
// directory whose spec.git.repo names no repository pvctl can keep under
// --repos.
func checkRepositoryObjects(in *input) error {
	var msgs []string
	for _, r := range in.repositories {
		where := fmt.Sprintf("%s: Repository %q", in.files["Repository/"+r.Name], r.Name)
		if r.Spec.Type != "" && r.Spec.Type != porchconfig.RepositoryTypeGit {
			msgs = append(msgs, fmt.Sprintf("%s: `spec.type` is %q; pvctl run serves git repositories", where, r.Spec.Type))
			continue
		}
		g := r.Spec.Git
		if g == nil || strings.Trim(g.Directory, "/") == "" {
			continue
		}
		if msg := validate.PackagePath(strings.Trim(g.Directory, "/")); msg != "" {
			msgs = append(msgs, fmt.Sprintf("%s: `spec.git.directory` %q: %s", where, g.Directory, msg))
		}
		if g.Repo != "" {
			if msg := validate.DNS1123Subdomain(repoBase(g.Repo)); msg != "" {
				msgs = append(msgs, fmt.Sprintf("%s: `spec.git.repo` %q: pvctl serves a repository scoped to a directory from the bare repository <repos>/<name>.git its URL ends in, and %q %s", where, g.Repo, repoBase(g.Repo), msg))
			}
		}
	}
	if len(msgs) > 0 {
		return &inputError{msgs}
	}
	return nil
}
