package gateway

import (
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/provider/secret"
)

const skillPDF = "---\nname: pdf\ndescription: Work with PDF files\n---\n\nUse pdftotext.\n"

// An attacker's notes, for skills and templates: tenant globex, through
// every resource route, reaches nothing of acme's; roles decide who
// writes; bad text is refused naming the line and reason.
func TestResourcesOfAnotherTenantAreMissing(t *testing.T) {
	f := newFixture(t, nil)
	bearer := func(s secret.Secret) string { return "Bearer " + s.Reveal() }
	acmeAdmin, _ := f.newKey(t, f.admin, RoleTenantAdmin, "acme")
	acmeViewer, _ := f.newKey(t, f.admin, RoleViewer, "acme")
	acmeMember, _ := f.newKey(t, f.admin, RoleMember, "acme")
	globex, _ := f.newKey(t, f.admin, RoleTenantAdmin, "globex")

	code, out, _ := f.call(t, bearer(acmeAdmin), "PUT", "/v1/skills/pdf", skillPDF)
	if code != 200 || out["version"] == nil || out["description"] != "Work with PDF files" {
		t.Fatalf("put: %d %v", code, out)
	}
	if code, out, _ := f.call(t, bearer(acmeAdmin), "PUT", "/v1/templates/review", "Review $1"); code != 200 || out["description"] != "Review $1" {
		t.Fatalf("put template: %d %v", code, out)
	}
	if code, out, _ := f.call(t, bearer(acmeAdmin), "PUT", "/v1/system-prompt/append", "Be brief."); code != 200 || out["kind"] != "system" {
		t.Fatalf("put system append: %d %v", code, out)
	}
	// acme's viewer reads; a member cannot write.
	if code, out, _ := f.call(t, bearer(acmeViewer), "GET", "/v1/skills/pdf", ""); code != 200 || !strings.Contains(out["text"].(string), "pdftotext") {
		t.Fatalf("viewer get: %d %v", code, out)
	}
	if code, out, _ := f.call(t, bearer(acmeViewer), "GET", "/v1/skills", ""); code != 200 || len(out["skills"].([]any)) != 1 {
		t.Fatalf("viewer list: %d %v", code, out)
	}
	if code, out, _ := f.call(t, bearer(acmeMember), "PUT", "/v1/skills/pdf", skillPDF); code != 403 || !strings.Contains(errMsg(out), "needs tenant-admin") {
		t.Fatalf("member put: %d %v", code, out)
	}
	// globex: every route answers as if acme's resources did not exist.
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/v1/skills/pdf", ""}, {"DELETE", "/v1/skills/pdf", ""},
		{"GET", "/v1/templates/review", ""}, {"DELETE", "/v1/templates/review", ""},
		{"GET", "/v1/system-prompt/append", ""}, {"DELETE", "/v1/system-prompt/append", ""},
	} {
		code, out, _ := f.call(t, bearer(globex), c.method, c.path, c.body)
		if code != 404 || errCode(out) != "not_found" {
			t.Errorf("globex %s %s = %d %v, want 404", c.method, c.path, code, out)
		}
	}
	for p, key := range map[string]string{"/v1/skills": "skills", "/v1/templates": "templates", "/v1/system-prompt": "systems"} {
		code, out, _ := f.call(t, bearer(globex), "GET", p, "")
		if l, ok := out[key].([]any); code != 200 || !ok || len(l) != 0 {
			t.Errorf("globex list %s = %d %v", p, code, out)
		}
	}
	// globex's own pdf is its own; acme's is untouched.
	if code, _, _ := f.call(t, bearer(globex), "PUT", "/v1/skills/pdf", strings.Replace(skillPDF, "pdftotext", "mutool", 1)); code != 200 {
		t.Fatal("globex put")
	}
	if _, out, _ := f.call(t, bearer(acmeViewer), "GET", "/v1/skills/pdf", ""); !strings.Contains(out["text"].(string), "pdftotext") {
		t.Fatalf("acme's skill changed: %v", out)
	}
	// Refusals name the problem.
	for _, c := range []struct {
		path, body string
		code       int
		msg        string
	}{
		{"/v1/skills/pdf", "# no front matter", 400, `skill "pdf": line 1: no front matter`},
		{"/v1/skills/other", skillPDF, 400, `front matter name "pdf" does not match the skill's name "other"`},
		{"/v1/skills/Bad_Name", skillPDF, 400, "name contains invalid characters"},
		{"/v1/skills/x", "---\ndescription: [oops\n---\n", 400, "line 2: front matter is not valid YAML"},
		{"/v1/skills/x", "---\ndescription: d\n---\n" + strings.Repeat("x", 200<<10), 413, "at most 131072 bytes"},
		{"/v1/templates/a.b", "x", 400, "name contains invalid characters"},
		{"/v1/system-prompt/prefix", "x", 400, "name must be base"},
		{"/v1/system-prompt/base", "bad \x00 byte", 400, `system "base": line 1: contains a NUL byte`},
	} {
		code, out, _ := f.call(t, bearer(acmeAdmin), "PUT", c.path, c.body)
		if code != c.code || !strings.Contains(errMsg(out), c.msg) {
			t.Errorf("PUT %s = %d %v, want %d %q", c.path, code, out, c.code, c.msg)
		}
	}
	// Delete, then it is gone.
	if code, _, _ := f.call(t, bearer(acmeAdmin), "DELETE", "/v1/skills/pdf", ""); code != 200 {
		t.Fatal("delete")
	}
	if code, _, _ := f.call(t, bearer(acmeViewer), "GET", "/v1/skills/pdf", ""); code != 404 {
		t.Fatal("deleted skill still read")
	}
}
