package cli

import (
	"os"
	"os/exec"
	"strings"
)

// approver is who a person's pvctl approve is recorded as approved by
// (store.Revision.PublishedBy; a person's edit found in the revision is
// recorded as approved by them): git's committer identity,
// "Name <email>", as git would sign a commit made here
// ($GIT_COMMITTER_NAME and _EMAIL, user.name and user.email, else git's
// guess from the login and host); the login name when git does not
// answer. It is the person's word, as a commit's author is: pvctl has no
// authentication to check it against (Porch records the approval
// request's authenticated user).
func approver() string {
	out, err := exec.Command("git", "var", "GIT_COMMITTER_IDENT").Output()
	if err == nil {
		// "Name <email> 1700000000 +0000": the time and zone left out.
		f := strings.Fields(strings.TrimSpace(string(out)))
		if len(f) > 2 {
			return strings.Join(f[:len(f)-2], " ")
		}
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "unknown"
}
