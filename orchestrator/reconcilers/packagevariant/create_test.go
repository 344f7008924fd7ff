package packagevariant

import "testing"

// A draft's kind is said with its article: an upgrade, a clone.
func TestArticle(t *testing.T) {
	for word, want := range map[string]string{"upgrade": "an", "edit": "an", "clone": "a", "": "a"} {
		if got := article(word); got != want {
			t.Errorf("article(%q) = %q, want %q", word, got, want)
		}
	}
}
