package lint

import (
	"bufio"
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/cairn-agents/cairn"

type pkgInfo struct {
	path    string
	imports []string
	doc     string
}

// listPackages runs `go list` over the whole module.
func listPackages(t *testing.T) []pkgInfo {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{join .Imports \" \"}}\t{{.Doc}}", module+"/...")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list: %v\n%s", err, stderr)
	}
	var pkgs []pkgInfo
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), "\t", 3)
		if len(parts) != 3 {
			t.Fatalf("unexpected go list line %q", sc.Text())
		}
		pkgs = append(pkgs, pkgInfo{path: parts[0], imports: strings.Fields(parts[1]), doc: parts[2]})
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no packages")
	}
	return pkgs
}

func rel(path string) string { return strings.TrimPrefix(strings.TrimPrefix(path, module), "/") }

// serviceOf returns the service a package belongs to, or "".
func serviceOf(path string) string {
	r := rel(path)
	if !strings.HasPrefix(r, "services/") {
		return ""
	}
	name, _, _ := strings.Cut(strings.TrimPrefix(r, "services/"), "/")
	return name
}

// isTestSupport reports whether a package exists to help tests, like
// net/http/httptest: its name ends in "test". Such packages may import testing.
func isTestSupport(path string) bool {
	last := path[strings.LastIndexByte(path, '/')+1:]
	return strings.HasSuffix(last, "test")
}

func TestImportBoundaries(t *testing.T) {
	for _, p := range listPackages(t) {
		r := rel(p.path)
		for _, imp := range p.imports {
			switch {
			case strings.HasPrefix(r, "pkg/") && serviceOf(imp) != "":
				t.Errorf("%s imports %s: pkg/ must never import services/", r, rel(imp))
			case serviceOf(p.path) != "" && serviceOf(imp) != "" && serviceOf(imp) != serviceOf(p.path):
				t.Errorf("%s imports %s: a service must not import another service", r, rel(imp))
			case imp == "testing" && !isTestSupport(p.path):
				t.Errorf("%s imports testing: production code must not (test helpers live in packages named *test)", r)
			}
		}
	}
}

func TestEveryPackageDocumented(t *testing.T) {
	for _, p := range listPackages(t) {
		if strings.TrimSpace(p.doc) == "" {
			t.Errorf("%s has no package comment; say what it guarantees", rel(p.path))
		}
	}
}
