package gitstore

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
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
