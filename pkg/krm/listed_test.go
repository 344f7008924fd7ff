package krm

import "testing"

func TestListed(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		max  int
		want string
	}{
		{nil, 2, ""},
		{[]string{"a", "b"}, 2, "a, b"},
		{[]string{"a", "b", "c", "d"}, 2, "a, b and 2 more"},
	} {
		if got := Listed(tc.in, tc.max); got != tc.want {
			t.Errorf("Listed(%v, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}
