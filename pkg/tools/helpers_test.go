package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// newSet returns the tools of a fresh workspace and its directory.
func newSet(t testing.TB, opts ...Option) (*Set, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := New(dir, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close set: %v", err)
		}
	})
	return s, s.Workspace().Dir()
}

// call runs the named tool with args (a JSON string or a value to marshal).
func call(t testing.TB, s *Set, name string, args any) (tool.Result, error) {
	t.Helper()
	return callUpdates(t, s, name, args, nil)
}

func callUpdates(t testing.TB, s *Set, name string, args any, onUpdate func(tool.Result)) (tool.Result, error) {
	t.Helper()
	tl, ok := s.Get(name)
	if !ok {
		t.Fatalf("no tool %q", name)
	}
	raw, ok := args.(string)
	if !ok {
		b, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		raw = string(b)
	}
	return tl.Execute(context.Background(), tool.Call{ID: "c1", Name: name, Arguments: json.RawMessage(raw)}, onUpdate)
}

// mustCall runs a tool that must succeed without an error result.
func mustCall(t testing.TB, s *Set, name string, args any) tool.Result {
	t.Helper()
	r, err := call(t, s, name, args)
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	if r.IsError {
		t.Fatalf("%s %v: error result: %s", name, args, text(r))
	}
	return r
}

// text returns the text blocks of r.
func text(r tool.Result) string { return events.Content{Blocks: r.Content}.Text() }

func writeFile(t testing.TB, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantContains(t testing.TB, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("output does not contain %q:\n%s", w, got)
		}
	}
}

// decodeDetails unmarshals r.Details into v.
func decodeDetails(t testing.TB, r tool.Result, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Details, v); err != nil {
		t.Fatalf("details %s: %v", r.Details, err)
	}
}

// callIn returns a call confined to the workspace dir.
func callIn(dir, name, args string) tool.Call {
	return tool.Call{ID: "c1", Name: name, Arguments: json.RawMessage(args), Workspace: dir}
}
