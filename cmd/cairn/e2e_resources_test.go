package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A pi user's resources directory imports unchanged: SKILL.md folders and
// prompts/*.md; the CLI lists, prints and removes them; a broken file is
// named with its line and nothing is stored.
func TestE2EResourcesImport(t *testing.T) {
	u := startUp(t)
	dir := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("skills/pdf/SKILL.md", "---\nname: pdf\ndescription: Work with PDF files\n---\n\nUse pdftotext.\n")
	write("skills/group/git-flow/SKILL.md", "---\ndescription: Branching rules\n---\nRebase, never merge.\n")
	write("skills/.hidden/secret/SKILL.md", "---\ndescription: skipped\n---\n")
	write("prompts/review.md", "---\ndescription: Review staged changes\n---\nReview $1 with care: $@\n")
	write("APPEND_SYSTEM.md", "Answer in French.\n")
	recorded := []string{"XDG_CONFIG_HOME=" + os.Getenv("XDG_CONFIG_HOME")}
	out, err := u.cairnAs(t, recorded, "resources", "import", dir)
	if err != nil {
		t.Fatalf("import: %v %s", err, out)
	}
	for _, want := range []string{"stored skill git-flow version", "stored skill pdf version", "stored template review version", "stored system append version"} {
		if !strings.Contains(out, want) {
			t.Errorf("import output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "secret") {
		t.Errorf("a dot folder was imported:\n%s", out)
	}
	if out, err := u.cairnAs(t, recorded, "skills", "list"); err != nil || !strings.Contains(out, "pdf") || !strings.Contains(out, "Branching rules") {
		t.Fatalf("skills list: %v %s", err, out)
	}
	if out, err := u.cairnAs(t, recorded, "templates", "get", "review"); err != nil || !strings.Contains(out, "Review $1 with care: $@") {
		t.Fatalf("templates get: %v %s", err, out)
	}
	if out, err := u.cairnAs(t, recorded, "system-prompt", "get", "append"); err != nil || out != "Answer in French.\n" {
		t.Fatalf("system-prompt get append: %v %q", err, out)
	}
	if out, err := u.cairnAs(t, recorded, "system-prompt", "put", "middle", "-"); err == nil || !strings.Contains(out, "name must be base") {
		t.Fatalf("system-prompt put middle: %v %s", err, out)
	}
	if out, err := u.cairnAs(t, recorded, "skills", "rm", "pdf"); err != nil || !strings.Contains(out, "deleted skill pdf") {
		t.Fatalf("skills rm: %v %s", err, out)
	}
	if out, err := u.cairnAs(t, recorded, "skills", "get", "pdf"); err == nil || !strings.Contains(out, "404") {
		t.Fatalf("get after rm: %v %s", err, out)
	}
	// One broken file: named with its line, and nothing stored.
	write("skills/broken/SKILL.md", "---\ndescription: [oops\n---\n")
	write("prompts/new.md", "New $1\n")
	out, err = u.cairnAs(t, recorded, "resources", "import", dir)
	if err == nil || !strings.Contains(out, `skills/broken/SKILL.md: skill "broken": line 2: front matter is not valid YAML`) {
		t.Fatalf("broken import: %v %s", err, out)
	}
	if out, err := u.cairnAs(t, recorded, "templates", "get", "new"); err == nil {
		t.Fatalf("a template was stored by a refused import: %s", out)
	}
}
