package tools

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
)

func grepFixture(t *testing.T, opts ...Option) (*Set, string) {
	s, ws := newSet(t, opts...)
	writeFile(t, ws, "a.go", "package a\n\nfunc Hello() {}\n// hello again\n")
	writeFile(t, ws, "src/b.ts", "export const hello = 1;\nconst x = 2;\nconst y = 3;\nhello();\n")
	writeFile(t, ws, "src/deep/c.go", "package deep\nvar Hello = \"a.b\"\n")
	writeFile(t, ws, ".git/config", "hello from git\n")
	writeFile(t, ws, "bin.dat", "hello\x00binary")
	writeFile(t, ws, ".hidden", "hello hidden\n")
	return s, ws
}

func TestGrep(t *testing.T) {
	s, _ := grepFixture(t)
	r := mustCall(t, s, "grep", map[string]any{"pattern": "hello"})
	want := ".hidden:1: hello hidden\na.go:4: // hello again\nsrc/b.ts:1: export const hello = 1;\nsrc/b.ts:4: hello();"
	if got := text(r); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	var d GrepDetails
	decodeDetails(t, r, &d)
	if d.Matches != 4 || d.Files != 3 || d.LimitReached {
		t.Fatalf("details %+v", d)
	}
}

func TestGrepOptions(t *testing.T) {
	s, _ := grepFixture(t)
	cases := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"pattern": "hello", "ignoreCase": true, "glob": "*.go"},
			"a.go:3: func Hello() {}\na.go:4: // hello again\nsrc/deep/c.go:2: var Hello = \"a.b\""},
		{map[string]any{"pattern": "a.b", "literal": true}, "src/deep/c.go:2: var Hello = \"a.b\""},
		{map[string]any{"pattern": "Hello", "path": "src"}, "src/deep/c.go:2: var Hello = \"a.b\""},
		{map[string]any{"pattern": "Hello", "path": "./src/deep/c.go"}, "src/deep/c.go:2: var Hello = \"a.b\""},
		{map[string]any{"pattern": "hello", "glob": "src/**/*.{ts,tsx}"}, "src/b.ts:1: export const hello = 1;\nsrc/b.ts:4: hello();"},
		{map[string]any{"pattern": "^const", "context": 1, "path": "src"},
			"src/b.ts-1- export const hello = 1;\nsrc/b.ts:2: const x = 2;\nsrc/b.ts:3: const y = 3;\nsrc/b.ts-4- hello();"},
		{map[string]any{"pattern": "nothing here"}, "No matches found"},
	}
	for _, c := range cases {
		r := mustCall(t, s, "grep", c.args)
		if got := text(r); got != c.want {
			t.Errorf("grep %v:\n%s\nwant\n%s", c.args, got, c.want)
		}
	}
}

func TestGrepLimitAndCaps(t *testing.T) {
	s, ws := newSet(t, WithOutputLimit(1000, 300))
	var b strings.Builder
	for i := range 50 {
		fmt.Fprintf(&b, "match %d\n", i)
	}
	writeFile(t, ws, "m.txt", b.String())
	r := mustCall(t, s, "grep", map[string]any{"pattern": "match", "limit": 3, "path": "m.txt"})
	want := "m.txt:1: match 0\nm.txt:2: match 1\nm.txt:3: match 2\n\n[3 matches limit reached. Use limit=6 for more, or refine the pattern.]"
	if got := text(r); got != want {
		t.Fatalf("limit:\n%s", got)
	}
	r = mustCall(t, s, "grep", map[string]any{"pattern": "match", "path": "m.txt"})
	var d GrepDetails
	decodeDetails(t, r, &d)
	if d.Truncation == nil || d.Truncation.TotalLines != 50 || d.Matches != 50 {
		t.Fatalf("details %+v", d)
	}
	wantContains(t, text(r), fmt.Sprintf("[Output cut to %d of 50 lines (300B limit)", d.Truncation.OutputLines))
	s, ws = newSet(t)
	writeFile(t, ws, "long.txt", "match "+strings.Repeat("y", 1000)+"\n")
	r = mustCall(t, s, "grep", map[string]any{"pattern": "match", "path": "long.txt"})
	wantContains(t, text(r), strings.Repeat("y", GrepMaxLineChars-6)+"... [truncated]", "Some lines cut to 500 characters")
}

func TestGrepErrors(t *testing.T) {
	s, _ := grepFixture(t)
	cases := map[string]string{
		`{"pattern":"("}`:                "pattern: invalid regular expression",
		`{"pattern":""}`:                 "pattern: must not be empty",
		`{"pattern":"a","context":-1}`:   "context: must be between 0 and 100",
		`{"pattern":"a","limit":0}`:      "limit: must be at least 1",
		`{"pattern":"a","glob":"[a"}`:    "glob: malformed glob",
		`{"pattern":"a","ignore":true}`:  "ignore: unknown argument of grep",
		`{"pattern":"a","literal":"no"}`: "literal: must be a boolean",
	}
	for args, want := range cases {
		_, err := call(t, s, "grep", args)
		if !errors.Is(err, events.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("grep %s: %v, want %q", args, err, want)
		}
	}
	r, err := call(t, s, "grep", map[string]any{"pattern": "a", "path": "nope"})
	if err != nil || !r.IsError || text(r) != "Path not found: nope" {
		t.Fatalf("missing path: %v %q", err, text(r))
	}
}

func TestGrepCancelled(t *testing.T) {
	s, _ := grepFixture(t)
	tl, _ := s.Get("grep")
	ctx, cancel := contextCancelled()
	defer cancel()
	_, err := tl.Execute(ctx, callIn("", "grep", `{"pattern":"hello"}`), nil)
	if err == nil {
		t.Fatal("grep ran on a cancelled context")
	}
}

func TestGrepIgnoreCaseFolding(t *testing.T) {
	s, ws := newSet(t)
	writeFile(t, ws, "kelvin.txt", "200 \u212Aelvin\n")
	writeFile(t, ws, "longs.txt", "me\u017F\u017Fage\n")
	writeFile(t, ws, "upper.txt", "NEEDLE\n")
	cases := map[string]string{
		"kelvin":  "kelvin.txt:1: 200 \u212Aelvin",
		"message": "longs.txt:1: me\u017F\u017Fage",
		"needle":  "upper.txt:1: NEEDLE",
	}
	for pat, want := range cases {
		r := mustCall(t, s, "grep", map[string]any{"pattern": pat, "ignoreCase": true})
		if got := text(r); got != want {
			t.Errorf("grep -i %s = %q, want %q", pat, got, want)
		}
	}
	if foldLiteral("(?i)needle") != "needle" || foldLiteral("(?i)ne+dle") != "" || foldLiteral("needle") != "" {
		t.Error("foldLiteral")
	}
}

func TestGrepAnchorsAcrossLines(t *testing.T) {
	s, ws := newSet(t)
	writeFile(t, ws, "f.txt", "x\nconst a\nb const\n")
	r := mustCall(t, s, "grep", map[string]any{"pattern": "^const|const$"})
	if got := text(r); got != "f.txt:2: const a\nf.txt:3: b const" {
		t.Fatalf("got %q", got)
	}
	r = mustCall(t, s, "grep", map[string]any{"pattern": `\Aconst`})
	if got := text(r); got != "f.txt:2: const a" {
		t.Fatalf(`\A per line: %q`, got)
	}
}
