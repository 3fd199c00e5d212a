package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
)

// ownedNames is every stream, bucket, consumer and subject pattern name
// events.Names gives under the default prefix, but the compactors' and the
// projector's consumer names, which are also the names of the services
// and of their NATS connections ("compactor", "cairn-projector").
func ownedNames() map[string]bool {
	n := events.Names{}
	names := []string{n.SessionsStream(), n.CommandsStream(), n.ToolsStream(), n.EventsStream(),
		n.ResultsStream(), n.CompactionsStream(), n.ToolPoolConsumer("")}
	for _, b := range []string{n.ToolsBucket(), n.ToolStartsBucket(), n.OutcomesBucket(), n.LeasesBucket(),
		n.CheckpointsBucket(), n.ExtensionsBucket()} {
		names = append(names, b, events.KVStream(b))
	}
	for _, b := range []string{n.BlobsBucket(), n.SnapshotsBucket()} {
		names = append(names, b, events.ObjectStream(b))
	}
	names = append(names, n.Patterns().All()...)
	for _, p := range n.LegacyPerSession() { // the layout before tenants
		names = append(names, p)
	}
	set := map[string]bool{}
	for _, s := range names {
		set[s] = true
	}
	return set
}

// TestNamesHaveOneOwner keeps infrastructure names in one place: no
// production Go file outside pkg/events spells a stream, bucket, consumer
// or subject pattern name that events.Names builds, nor builds the stream
// or subjects of a KV bucket or object store by hand ("KV_", "OBJ_",
// "$KV.", "$O."). They call events.Names (and pkg/provision for
// configurations) instead, so a rename or a --prefix reaches every user.
// Tests may spell names out; comments and help texts may mention them.
func TestNamesHaveOneOwner(t *testing.T) {
	owned := ownedNames()
	root := filepath.Join("..", "..")
	owner := filepath.Join(root, "pkg", "events")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (path == owner || path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, bad := range nameLiterals(f, owned) {
			pos := fset.Position(bad.Pos())
			r, _ := filepath.Rel(root, pos.Filename)
			t.Errorf("%s:%d: %s names infrastructure by hand; use events.Names (pkg/events) or pkg/provision", r, pos.Line, bad.Value)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// nameLiterals returns the string literals of f that are an owned name or
// build a KV or object store stream or subject.
func nameLiterals(f *ast.File, owned map[string]bool) []*ast.BasicLit {
	var out []*ast.BasicLit
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		if owned[s] || hasAnyPrefix(s, "KV_", "OBJ_", "$KV.", "$O.") {
			out = append(out, lit)
		}
		return true
	})
	return out
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// The rule sees what it must: a bucket name, a stream name, a KV subject
// built by hand, and leaves help texts and metric names alone.
func TestNameLiteralsFindsHandWrittenNames(t *testing.T) {
	src := `package p
const a = "cairn_leases"
var b = "CAIRN_SESSIONS"
func c(bucket string) string { return "$KV." + bucket + ".>" }
var d = "cairn.session.*"
var ok1 = "cairn_orchestrator_partitions_held"
var ok2 = "Tool calls waiting in CAIRN_TOOLS."
var ok3 = "cairn.session.id"
`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range nameLiterals(f, ownedNames()) {
		got = append(got, l.Value)
	}
	want := `"cairn_leases" "CAIRN_SESSIONS" "$KV." "cairn.session.*"`
	if strings.Join(got, " ") != want {
		t.Errorf("found %v, want %s", got, want)
	}
}
