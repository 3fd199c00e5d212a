package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestTestsDoNotSleep keeps tests from waiting blind: no time.Sleep, and no
// time.After used to pace a poll: a bare `<-time.After(d)`, or a select case
// on it with an empty body (the select only waited). A select case on
// time.After that does something (fails the test, returns, kills a process)
// is a timeout guard and allowed. Tests wait for a state with
// kittest.Eventually instead, or pace a retry loop with a time.Ticker.
func TestTestsDoNotSleep(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, p := range blindWaits(f) {
			pos := fset.Position(p.pos)
			r, _ := filepath.Rel(root, pos.Filename)
			t.Errorf("%s:%d: %s; wait for the state with kittest.Eventually (or guard with a timer that fails the test)", r, pos.Line, p.what)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

type blindWait struct {
	pos  token.Pos
	what string
}

// blindWaits finds the sleeps and time.After polls in f.
func blindWaits(f *ast.File) []blindWait {
	var out []blindWait
	guards := map[ast.Expr]bool{} // time.After calls in a terminating select case
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CommClause:
			if c := afterRecv(n.Comm); c != nil {
				if len(n.Body) == 0 {
					out = append(out, blindWait{c.Pos(), "select case on time.After with nothing to do paces a poll"})
				}
				guards[c] = true
			}
		case *ast.ExprStmt:
			if c := recvOfAfter(n.X); c != nil && !guards[c] {
				out = append(out, blindWait{c.Pos(), "bare <-time.After waits blind"})
				guards[c] = true
			}
		case *ast.CallExpr:
			if isTimeCall(n, "Sleep") {
				out = append(out, blindWait{n.Pos(), "time.Sleep"})
			}
		}
		return true
	})
	return out
}

// afterRecv returns the time.After call a select case receives from, or nil.
func afterRecv(s ast.Stmt) *ast.CallExpr {
	switch s := s.(type) {
	case *ast.ExprStmt:
		return recvOfAfter(s.X)
	case *ast.AssignStmt:
		if len(s.Rhs) == 1 {
			return recvOfAfter(s.Rhs[0])
		}
	}
	return nil
}

func recvOfAfter(e ast.Expr) *ast.CallExpr {
	u, ok := e.(*ast.UnaryExpr)
	if !ok || u.Op != token.ARROW {
		return nil
	}
	c, ok := ast.Unparen(u.X).(*ast.CallExpr)
	if !ok || !isTimeCall(c, "After") {
		return nil
	}
	return c
}

func isTimeCall(c *ast.CallExpr, name string) bool {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == "time"
}
