package tools

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

func TestSetSpecs(t *testing.T) {
	s, _ := newSet(t)
	var names []string
	for _, tl := range s.All() {
		sp := tl.Spec()
		names = append(names, sp.Name)
		if err := events.ValidateToolName("name", sp.Name); err != nil {
			t.Errorf("%s: %v", sp.Name, err)
		}
		if sp.Description == "" || sp.Mode != events.Parallel {
			t.Errorf("%s: description %q, mode %q", sp.Name, sp.Description, sp.Mode)
		}
		got, ok := s.Get(sp.Name)
		if !ok || got != tl {
			t.Errorf("Get(%q) = %v, %v", sp.Name, got, ok)
		}
	}
	if !slices.Equal(names, Names) {
		t.Fatalf("names %v, want %v", names, Names)
	}
	if _, ok := s.Get("rm"); ok {
		t.Fatal("Get found a tool that does not exist")
	}
	idempotent := map[string]bool{"read": true, "write": true, "edit": false, "bash": false, "grep": true, "find": true, "ls": true}
	for name, want := range idempotent {
		tl, _ := s.Get(name)
		if tl.Spec().Idempotent != want {
			t.Errorf("%s: idempotent %v, want %v", name, !want, want)
		}
	}
	bash, _ := s.Get("bash")
	if bash.Spec().TimeoutMs < time.Hour.Milliseconds() {
		t.Errorf("bash spec timeout %dms is below the largest timeout a call may ask for", bash.Spec().TimeoutMs)
	}
}

func compileSchema(t *testing.T, sp events.ToolSpec) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(sp.Parameters))
	if err != nil {
		t.Fatalf("%s: schema is not JSON: %v", sp.Name, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "mem://" + sp.Name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s: schema does not compile as draft 2020-12: %v", sp.Name, err)
	}
	return sch
}

// The schemas are strict, and they agree with the argument decoders:
// whatever the schema refuses, Execute refuses with a FieldError too.
func TestSchemasAgreeWithDecoders(t *testing.T) {
	s, ws := newSet(t)
	writeFile(t, ws, "f.txt", "abc\n")
	cases := []struct {
		tool, args string
		valid      bool
	}{
		{"read", `{"path":"f.txt","offset":1,"limit":5}`, true},
		{"read", `{"path":"f.txt","extra":1}`, false},
		{"read", `{"offset":1}`, false},
		{"read", `{"path":"f.txt","offset":0}`, false},
		{"write", `{"path":"g.txt","content":""}`, true},
		{"write", `{"path":"g.txt"}`, false},
		{"edit", `{"path":"f.txt","edits":[{"oldText":"abc","newText":"abd"}]}`, true},
		{"edit", `{"path":"f.txt","edits":[]}`, false},
		{"edit", `{"path":"f.txt","edits":[{"oldText":"abd"}]}`, false},
		{"edit", `{"path":"f.txt","edits":[{"oldText":"","newText":"x"}]}`, false},
		{"bash", `{"command":"true","timeout":1.5}`, true},
		{"bash", `{"command":"true","timeout":0}`, false},
		{"bash", `{"command":"true","timeout":999999}`, false},
		{"bash", `{"command":""}`, false},
		{"grep", `{"pattern":"a","path":".","glob":"*.txt","ignoreCase":true,"literal":false,"context":2,"limit":3}`, true},
		{"grep", `{"pattern":"a","context":101}`, false},
		{"grep", `{"path":"."}`, false},
		{"find", `{"pattern":"*.txt","path":".","limit":10}`, true},
		{"find", `{"pattern":"*.txt","limit":0}`, false},
		{"ls", `{}`, true},
		{"ls", `{"path":".","limit":1}`, true},
		{"ls", `{"path":".","all":true}`, false},
	}
	schemas := map[string]*jsonschema.Schema{}
	for _, tl := range s.All() {
		sp := tl.Spec()
		sch := compileSchema(t, sp)
		schemas[sp.Name] = sch
		// Strict at every level.
		if !strings.Contains(string(sp.Parameters), `"additionalProperties":false`) {
			t.Errorf("%s: schema allows additional properties", sp.Name)
		}
	}
	for _, c := range cases {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(c.args))
		if err != nil {
			t.Fatal(err)
		}
		schemaOK := schemas[c.tool].Validate(inst) == nil
		if schemaOK != c.valid {
			t.Errorf("%s %s: schema says valid=%v, want %v", c.tool, c.args, schemaOK, c.valid)
		}
		_, err = call(t, s, c.tool, c.args)
		decodeOK := !errors.Is(err, events.ErrInvalid)
		if decodeOK != c.valid {
			t.Errorf("%s %s: decoder says valid=%v (%v), want %v", c.tool, c.args, decodeOK, err, c.valid)
		}
	}
}

func TestNewOptionErrors(t *testing.T) {
	dir := t.TempDir()
	bad := []Option{
		WithOutputLimit(0, 100),
		WithOutputLimit(10, 1),
		WithBashTimeout(0, time.Second),
		WithBashTimeout(time.Minute, time.Second),
		WithUpdateInterval(0),
	}
	for i, o := range bad {
		if _, err := New(dir, o); err == nil {
			t.Errorf("option %d accepted", i)
		}
	}
	if _, err := New(dir + "/missing"); err == nil {
		t.Error("missing root accepted")
	}
}

// Tools run concurrently on one set (run with -race).
func TestConcurrentCalls(t *testing.T) {
	s, ws := grepFixture(t)
	writeFile(t, ws, "e.txt", "x\n")
	var wg sync.WaitGroup
	calls := []struct {
		name, args string
	}{
		{"read", `{"path":"a.go"}`},
		{"grep", `{"pattern":"hello"}`},
		{"find", `{"pattern":"*.go"}`},
		{"ls", `{}`},
		{"write", `{"path":"w.txt","content":"w"}`},
		{"bash", `{"command":"echo hi"}`},
	}
	errs := make(chan error, 8*len(calls))
	for range 8 {
		for _, c := range calls {
			tl, _ := s.Get(c.name)
			wg.Go(func() {
				r, err := tl.Execute(t.Context(), tool.Call{Arguments: []byte(c.args)}, func(tool.Result) {})
				if err == nil && r.IsError {
					err = errors.New(c.name + ": " + text(r))
				}
				if err != nil {
					errs <- err
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
