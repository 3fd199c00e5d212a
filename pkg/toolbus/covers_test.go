package toolbus

import "testing"

func TestCovers(t *testing.T) {
	for _, c := range []struct {
		p, q string
		want bool
	}{
		{"cairn.events.*", "cairn.events.*", true},
		{"cairn.events.>", "cairn.events.*", true},
		{"cairn.>", "cairn.tool.>", true},
		{"cairn.tool.>", "cairn.tool.>", true},
		{"cairn.*", "cairn.tool.>", false},
		{"cairn.events.*", "cairn.events.>", false},
		{"cairn.events.s1", "cairn.events.*", false},
		{"other.events.*", "cairn.events.*", false},
		{"cairn.events.*.x", "cairn.events.*", false},
	} {
		if got := covers(c.p, c.q); got != c.want {
			t.Errorf("covers(%q, %q) = %v, want %v", c.p, c.q, got, c.want)
		}
	}
}
