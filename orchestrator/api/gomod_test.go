package api_test

import (
	"os/exec"
	"strings"
)

// goModDir returns the module cache directory of a module in the build list.
func goModDir(module string) (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	return strings.TrimSpace(string(out)), err
}
