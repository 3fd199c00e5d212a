package lint

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readme returns the repository's README.md.
func readme(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatalf("read README.md: %v", err)
	}
	return string(data)
}

// folderTable returns the folders named in the first column of the README's
// folder table (the table whose header is "| folder | what |"), each written
// in backquotes, several to a cell allowed.
func folderTable(t *testing.T, text string) map[string]bool {
	t.Helper()
	_, rest, ok := strings.Cut(text, "| folder | what |")
	if !ok {
		t.Fatal(`README.md has no folder table (a table headed "| folder | what |")`)
	}
	named := map[string]bool{}
	quoted := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(rest, "\n")[1:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range quoted.FindAllStringSubmatch(cells[1], -1) {
			named[strings.TrimSuffix(m[1], "/")] = true
		}
	}
	return named
}

// TestEveryPackageInTheREADME keeps the README's folder table true: every
// package of the module is named there, and every folder named there is a
// package or a folder that exists.
func TestEveryPackageInTheREADME(t *testing.T) {
	named := folderTable(t, readme(t))
	for _, p := range listPackages(t) {
		if r := rel(p.path); !named[r] {
			t.Errorf("package %s is missing from the README's folder table", r)
		}
	}
	for f := range named {
		if _, err := os.Stat(filepath.Join("../..", f)); err != nil {
			t.Errorf("the README's folder table names %s, which does not exist", f)
		}
	}
}

// TestEveryDocInTheREADME: every page under docs/ is listed in the README.
func TestEveryDocInTheREADME(t *testing.T) {
	text := readme(t)
	err := filepath.WalkDir("../../docs", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
			return err
		}
		doc := strings.TrimPrefix(filepath.ToSlash(path), "../../")
		if !strings.Contains(text, doc) {
			t.Errorf("%s is not listed in the README", doc)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
