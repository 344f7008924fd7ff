package gitstore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"
)

// gitEnv makes every git call independent of the user's configuration and
// gives commits one identity.
var gitEnv = []string{
	"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0",
	"GIT_AUTHOR_NAME=pvctl", "GIT_AUTHOR_EMAIL=pvctl@pvkit.dev",
	"GIT_COMMITTER_NAME=pvctl", "GIT_COMMITTER_EMAIL=pvctl@pvkit.dev",
}

// git runs git on the repository gitDir and returns its stdout; an error
// carries git's stderr.
func git(gitDir string, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Env = append(append(os.Environ(), gitEnv...), "GIT_DIR="+gitDir)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("git %s in %s: %v: %s", args[0], gitDir, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// refs lists a repository's branches and tags: ref name -> commit.
func refs(gitDir string) (map[string]string, error) {
	out, err := git(gitDir, nil, "for-each-ref", "--format=%(objectname) %(*objectname) %(refname)", "refs/heads", "refs/tags")
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		f := strings.SplitN(line, " ", 3)
		if len(f) != 3 {
			return nil, fmt.Errorf("git for-each-ref in %s: unexpected line %q", gitDir, line)
		}
		obj := f[0]
		if f[1] != "" { // an annotated tag: the commit it points at
			obj = f[1]
		}
		m[f[2]] = obj
	}
	return m, nil
}

// updateRefs changes refs in one transaction (git update-ref --stdin):
// each op is "create REF SHA", "update REF NEW OLD" or "delete REF OLD".
func updateRefs(gitDir string, ops []string) error {
	if len(ops) == 0 {
		return nil
	}
	in := "start\n" + strings.Join(ops, "\n") + "\nprepare\ncommit\n"
	_, err := git(gitDir, []byte(in), "update-ref", "--stdin")
	return err
}

// catFile reads objects through one `git cat-file --batch` process.
type catFile struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	dir string
}

func newCatFile(gitDir string) (*catFile, error) {
	cmd := exec.Command("git", "cat-file", "--batch")
	cmd.Env = append(append(os.Environ(), gitEnv...), "GIT_DIR="+gitDir)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git cat-file in %s: %w", gitDir, err)
	}
	return &catFile{cmd: cmd, in: in, out: bufio.NewReader(out), dir: gitDir}, nil
}

func (c *catFile) close() {
	c.in.Close()
	_ = c.cmd.Wait()
}

// errMissing is an object that does not exist.
var errMissing = errors.New("missing")

// read returns an object's type and content.
func (c *catFile) read(obj string) (string, []byte, error) {
	if _, err := fmt.Fprintln(c.in, obj); err != nil {
		return "", nil, err
	}
	header, err := c.out.ReadString('\n')
	if err != nil {
		return "", nil, fmt.Errorf("git cat-file in %s: %w", c.dir, err)
	}
	f := strings.Fields(header)
	if len(f) == 2 && f[1] == "missing" {
		return "", nil, fmt.Errorf("%s: %w", obj, errMissing)
	}
	if len(f) != 3 {
		return "", nil, fmt.Errorf("git cat-file in %s: unexpected header %q", c.dir, header)
	}
	size, err := strconv.Atoi(f[2])
	if err != nil {
		return "", nil, fmt.Errorf("git cat-file in %s: unexpected header %q", c.dir, header)
	}
	buf := make([]byte, size+1) // content and a newline
	if _, err := io.ReadFull(c.out, buf); err != nil {
		return "", nil, fmt.Errorf("git cat-file in %s: %w", c.dir, err)
	}
	return f[1], buf[:size], nil
}

// files reads the files below dir in a commit, keyed by their path relative
// to dir. A commit without dir has no files.
func (c *catFile) files(commit, dir string) (map[string]string, error) {
	out := map[string]string{}
	typ, body, err := c.read(commit + ":" + dir)
	if errors.Is(err, errMissing) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	if typ != "tree" {
		return nil, fmt.Errorf("%s:%s is a %s, not a directory", commit, dir, typ)
	}
	return out, c.walk(body, "", out)
}

// walk reads a tree object's entries ("<mode> <name>\0<20-byte id>"),
// descending into subtrees; links and submodules are skipped.
func (c *catFile) walk(tree []byte, prefix string, out map[string]string) error {
	for len(tree) > 0 {
		sp := bytes.IndexByte(tree, ' ')
		nul := bytes.IndexByte(tree, 0)
		if sp < 0 || nul < sp || len(tree) < nul+21 {
			return fmt.Errorf("git in %s: malformed tree object", c.dir)
		}
		mode, name, id := string(tree[:sp]), string(tree[sp+1:nul]), fmt.Sprintf("%x", tree[nul+1:nul+21])
		tree = tree[nul+21:]
		switch {
		case mode == "40000":
			_, sub, err := c.read(id)
			if err != nil {
				return err
			}
			if err := c.walk(sub, prefix+name+"/", out); err != nil {
				return err
			}
		case strings.HasPrefix(mode, "100"):
			_, blob, err := c.read(id)
			if err != nil {
				return err
			}
			out[prefix+name] = string(blob)
		}
	}
	return nil
}

// commitDir commits files as directory dir on top of parent ("" for a root
// commit), replacing whatever dir held, and points ref at the new commit;
// git refuses if ref moved meanwhile (the new commit would not contain
// it). It returns the new commit.
func commitDir(gitDir, ref, parent, dir string, files map[string]string, message string, now time.Time) (string, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "commit %s\nmark :1\ncommitter pvctl <pvctl@pvkit.dev> %d +0000\ndata %d\n%s\n", ref, now.Unix(), len(message), message)
	if parent != "" {
		fmt.Fprintf(&b, "from %s\n", parent)
	}
	fmt.Fprintf(&b, "D %s\n", dir)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(&b, "M 100644 inline %s/%s\ndata %d\n%s\n", dir, name, len(files[name]), files[name])
	}
	b.WriteString("\nget-mark :1\ndone\n")
	out, err := git(gitDir, b.Bytes(), "fast-import", "--quiet", "--done")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}
