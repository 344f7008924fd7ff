package gitstore

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"sort"
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

// each op is "create REF SHA", "update REF NEW OLD" or "delete REF OLD".
func updateRefs(gitDir string, ops []string) error {
	if len(ops) == 0 {
		return nil
	}
	in := "start\n" + strings.Join(ops, "\n") + "\nprepare\ncommit\n"
	_, err := git(gitDir, []byte(in), "update-ref", "--stdin")
	return err
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
