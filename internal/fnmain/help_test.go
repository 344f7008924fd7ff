package fnmain

import (
	"strings"
	"testing"
)

// Help lays out a README's mdtogo sections (the short line is the first
// sentence, on one line); a README without one is named.
func TestHelp(t *testing.T) {
	readme := "# fn\n\n<!--mdtogo:Short-->\n\n`fn` does a thing. And\nmore.\n\n<!--mdtogo-->\n\n<!--mdtogo:Long-->\n\n## FunctionConfig\n\nfields\n\n<!--mdtogo-->\n\n## Examples\n\n<!--mdtogo:Examples-->\n\nkpt fn eval\n\n<!--mdtogo-->\n"
	got, err := Help("fn", readme)
	want := "`fn` does a thing.\n\n## FunctionConfig\n\nfields\n\nUsage:\n  kpt fn eval --image pvkit/fn:dev --fn-config CONFIG DIR\n  fn --help\n\nExamples:\n\nkpt fn eval\n"
	if err != nil || got != want {
		t.Fatalf("got %q, %v\nwant %q", got, err, want)
	}
	for _, c := range []struct{ readme, want string }{
		{"# fn\n", "fn's README has no <!--mdtogo:Short--> section"},
		{strings.Replace(readme, "<!--mdtogo:Examples-->", "", 1), "fn's README has no <!--mdtogo:Examples--> section"},
		{strings.TrimSuffix(readme, "<!--mdtogo-->\n"), "fn's README: the <!--mdtogo:Examples--> section does not end (<!--mdtogo-->)"},
	} {
		if _, err := Help("fn", c.readme); err == nil || err.Error() != c.want {
			t.Errorf("%v, want %s", err, c.want)
		}
	}
}
