package celbound

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

func stringVal(s string) ref.Val { return types.String(s) }

// One match is bounded in work before it runs: the input's length times
// the program's size.
func TestRegexWorkBounded(t *testing.T) {
	long := strings.Repeat("a", MaxRegexWork/100+1)
	got := boundedMatch(stringVal(long), stringVal(strings.Repeat("(a|b)", 100)))
	if !strings.Contains(fmt.Sprint(got), "is too expensive") {
		t.Fatalf("got %v", got)
	}
	if got := boundedMatch(stringVal("abc"), stringVal("^a.c$")); fmt.Sprint(got) != "true" {
		t.Fatalf("got %v", got)
	}
}

func TestCache(t *testing.T) {
	c := NewCache(10)
	c.Put("a", 1, 4)
	c.Put("b", 2, 4)
	c.Get("a") // b is now the least recently used
	c.Put("c", 3, 4)
	if _, ok := c.Get("b"); ok {
		t.Fatal("b stays")
	}
	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Fatal("a went")
	}
	c.Put("huge", 4, 11)
	if _, ok := c.Get("huge"); ok {
		t.Fatal("an entry over the budget is kept")
	}
	if used, n := c.Size(); used != 8 || n != 2 {
		t.Fatalf("size %d, %d", used, n)
	}
}

// BenchmarkRegexAtWorkBound: one match at the work bound (a 1,000
// instruction program over 20,000 characters that never match early).
func BenchmarkRegexAtWorkBound(b *testing.B) {
	pattern := strings.Repeat("[a-y]?", 150) + "z"
	_, insts, err := RegexProgram(pattern)
	if err != nil {
		b.Fatal(err)
	}
	input := strings.Repeat("a", MaxRegexWork/insts)
	for i := 0; i < b.N; i++ {
		if got := boundedMatch(types.String(input), types.String(pattern)); got != types.False {
			b.Fatalf("%v (%d instructions)", got, insts)
		}
	}
}
