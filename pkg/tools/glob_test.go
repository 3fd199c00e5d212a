package tools

import "testing"

func TestGlobMatch(t *testing.T) {
	cases := []struct {
		pattern, name string
		want          bool
	}{
		{"*.go", "a.go", true},
		{"*.go", "x/y/a.go", true}, // no slash: the base name
		{"*.go", "a.ts", false},
		{"**/*.go", "a.go", true},
		{"**/*.go", "x/y/a.go", true},
		{"src/**/*.go", "src/a.go", true},
		{"src/**/*.go", "src/x/y/a.go", true},
		{"src/**/*.go", "lib/a.go", false},
		{"src/*.go", "src/x/a.go", false},
		{"src/**", "src/x/a.go", true},
		{"*.{ts,tsx}", "a.tsx", true},
		{"*.{ts,tsx}", "a.js", false},
		{"{src,lib}/**/*.{go,md}", "lib/doc/x.md", true},
		{"{a,b{c,d}}.txt", "bd.txt", true},
		{"{unclosed", "{unclosed", true},
		{"?.txt", "a.txt", true},
		{"[ab].txt", "c.txt", false},
		{"/src/*.go", "src/a.go", true},
	}
	for _, c := range cases {
		if got := globMatch(c.pattern, c.name); got != c.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", c.pattern, c.name, got, c.want)
		}
	}
	if validGlob("[a") || !validGlob("src/**/*.{go,md}") {
		t.Error("validGlob")
	}
}
