package tools

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
)

type ed = map[string]string

func TestEditSeveral(t *testing.T) {
	s, ws := newSet(t)
	writeFile(t, ws, "f.go", "package a\n\nfunc A() {}\n\nfunc B() {}\n")
	r := mustCall(t, s, "edit", map[string]any{"path": "f.go", "edits": []ed{
		{"oldText": "func B() {}", "newText": "func B() int { return 2 }"},
		{"oldText": "func A() {}", "newText": "func A() int { return 1 }"},
	}})
	wantContains(t, text(r), "Successfully replaced 2 block(s) in f.go.")
	var d EditDetails
	decodeDetails(t, r, &d)
	if d.Replacements != 2 || d.FirstChangedLine != 3 {
		t.Fatalf("details %+v", d)
	}
	wantDiff := "@@ line 3 @@\n-func A() {}\n+func A() int { return 1 }\n@@ line 5 @@\n-func B() {}\n+func B() int { return 2 }\n"
	if d.Diff != wantDiff {
		t.Fatalf("diff\n%s\nwant\n%s", d.Diff, wantDiff)
	}
	want := "package a\n\nfunc A() int { return 1 }\n\nfunc B() int { return 2 }\n"
	if got := readFile(t, ws, "f.go"); got != want {
		t.Fatalf("got %q", got)
	}
}

// A failing edit names itself and why, and nothing is written.
func TestEditAllOrNothing(t *testing.T) {
	s, ws := newSet(t)
	orig := "x := 1\ny := 2\nx := 1\n"
	writeFile(t, ws, "f.go", orig)
	r, err := call(t, s, "edit", map[string]any{"path": "f.go", "edits": []ed{
		{"oldText": "y := 2", "newText": "y := 3"}, // fine on its own
		{"oldText": "z := 9", "newText": "z := 0"}, // missing
		{"oldText": "x := 1", "newText": "x := 5"}, // ambiguous
	}})
	if err != nil || !r.IsError {
		t.Fatalf("want error result, got %v %q", err, text(r))
	}
	wantContains(t, text(r),
		"Edit failed, f.go was not changed",
		"edit 2 of 3: oldText not found",
		"edit 3 of 3: oldText matches 2 times (at lines 1, 3)")
	if strings.Contains(text(r), "edit 1 of 3") {
		t.Errorf("the good edit is reported: %s", text(r))
	}
	if got := readFile(t, ws, "f.go"); got != orig {
		t.Fatalf("file changed to %q", got)
	}
}

func TestEditOverlapAndNoop(t *testing.T) {
	s, ws := newSet(t)
	writeFile(t, ws, "f.txt", "abcdef\n")
	r, _ := call(t, s, "edit", map[string]any{"path": "f.txt", "edits": []ed{
		{"oldText": "abcd", "newText": "1"},
		{"oldText": "cdef", "newText": "2"},
	}})
	if !r.IsError || !strings.Contains(text(r), "edits 1 and 2 overlap") {
		t.Fatalf("overlap: %q", text(r))
	}
	r, _ = call(t, s, "edit", map[string]any{"path": "f.txt", "edits": []ed{{"oldText": "abc", "newText": "abc"}}})
	if !r.IsError || !strings.Contains(text(r), "no edit changes anything") {
		t.Fatalf("noop: %q", text(r))
	}
	r, _ = call(t, s, "edit", map[string]any{"path": "nope.txt", "edits": []ed{{"oldText": "a", "newText": "b"}}})
	if !r.IsError || !strings.Contains(text(r), "File not found: nope.txt") {
		t.Fatalf("missing file: %q", text(r))
	}
}

func TestEditCRLFAndBOM(t *testing.T) {
	s, ws := newSet(t)
	writeFile(t, ws, "w.txt", "\uFEFFone\r\ntwo\r\nthree\r\n")
	mustCall(t, s, "edit", map[string]any{"path": "w.txt", "edits": []ed{{"oldText": "one\ntwo", "newText": "1\n2"}}})
	if got := readFile(t, ws, "w.txt"); got != "\uFEFF1\r\n2\r\nthree\r\n" {
		t.Fatalf("got %q", got)
	}
}

func TestEditDiffMultiline(t *testing.T) {
	s, ws := newSet(t)
	writeFile(t, ws, "f.txt", "a\nb\nc\nd\n")
	r := mustCall(t, s, "edit", map[string]any{"path": "f.txt", "edits": []ed{{"oldText": "b\nc\n", "newText": "X\n"}}})
	var d EditDetails
	decodeDetails(t, r, &d)
	if want := "@@ line 2 @@\n-b\n-c\n+X\n"; d.Diff != want {
		t.Fatalf("diff %q, want %q", d.Diff, want)
	}
	if got := readFile(t, ws, "f.txt"); got != "a\nX\nd\n" {
		t.Fatalf("got %q", got)
	}
	r = mustCall(t, s, "edit", map[string]any{"path": "f.txt", "edits": []ed{{"oldText": "X\n", "newText": ""}}})
	decodeDetails(t, r, &d)
	if want := "@@ line 2 @@\n-X\n"; d.Diff != want {
		t.Fatalf("deletion diff %q, want %q", d.Diff, want)
	}
}

func TestEditMixedLineEndings(t *testing.T) {
	s, ws := newSet(t)
	writeFile(t, ws, "m.txt", "one\r\ntwo\nthree\n")
	mustCall(t, s, "edit", map[string]any{"path": "m.txt", "edits": []ed{{"oldText": "two\nthree", "newText": "2\n3"}}})
	if got := readFile(t, ws, "m.txt"); got != "one\r\n2\n3\n" {
		t.Fatalf("got %q", got)
	}
}

func TestEditArgErrors(t *testing.T) {
	s, _ := newSet(t)
	cases := map[string]string{
		`{"path":"f"}`:                                               "edits: is required",
		`{"path":"f","edits":[]}`:                                    "edits: must hold at least one edit",
		`{"path":"f","edits":[{"oldText":"a"}]}`:                     "edits[0].newText: is required",
		`{"path":"f","edits":[{"oldText":"","newText":"b"}]}`:        "edits[0].oldText: must not be empty",
		`{"path":"f","edits":[{"oldText":"a","newText":"b","x":1}]}`: "edits[0].x: unknown argument",
		`{"path":"f","edits":{"oldText":"a"}}`:                       "edits: must be an array",
		`{"path":"f","oldText":"a","newText":"b"}`:                   "newText: unknown argument", // the first in key order
		`{"path":"f","edits":[{"oldText":1,"newText":"b"}]}`:         "edits[0].oldText: must be a string",
	}
	for args, want := range cases {
		_, err := call(t, s, "edit", args)
		if !errors.Is(err, events.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("edit %s: %v, want %q", args, err, want)
		}
	}
}
