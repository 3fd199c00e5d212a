package console

import (
	"io/fs"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func TestCSRFTokenIsBoundToTheCredential(t *testing.T) {
	a, b := CSRFToken("cairn_aaaa_secret1"), CSRFToken("cairn_aaaa_secret2")
	if a == b || a != CSRFToken("cairn_aaaa_secret1") {
		t.Fatalf("tokens %q, %q: want one per credential, stable", a, b)
	}
	if strings.Contains(a, "secret1") || len(a) != 43 {
		t.Fatalf("token %q: want 43 base64url characters that hold nothing of the key", a)
	}
	for _, c := range []struct {
		method, got string
		header      map[string]string
		ok          bool
	}{
		{"GET", "", nil, true},
		{"HEAD", "", map[string]string{"Sec-Fetch-Site": "cross-site"}, true},
		{"POST", a, nil, true},
		{"POST", a, map[string]string{"Sec-Fetch-Site": "same-origin"}, true},
		{"DELETE", "", nil, false},
		{"POST", b, nil, false},
		{"PUT", a, map[string]string{"Sec-Fetch-Site": "cross-site"}, false},
		{"POST", a, map[string]string{"Origin": "http://evil.example"}, false},
	} {
		r := httptest.NewRequest(c.method, "http://cairn.example/v1/sessions", nil)
		for k, v := range c.header {
			r.Header.Set(k, v)
		}
		err := CheckCSRF(r, "cairn_aaaa_secret1", c.got)
		if (err == nil) != c.ok || (err != nil && !IsCSRF(err)) {
			t.Errorf("%s with %q %v: %v, want ok=%v", c.method, c.got, c.header, err, c.ok)
		}
	}
}

// The pages run under script-src 'self' and style-src 'self': no inline
// script, style or event handler may creep into a template.
func TestTemplatesHoldNothingTheCSPRefuses(t *testing.T) {
	inline := regexp.MustCompile(`(?i)\sstyle\s*=|\son[a-z]+\s*=|<style|javascript:|https?://`)
	scripts := regexp.MustCompile(`(?i)<script[^>]*>`)
	err := fs.WalkDir(files, "templates", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		for _, tag := range scripts.FindAll(b, -1) {
			if !strings.Contains(string(tag), ` src="/assets/`) {
				t.Errorf("%s holds %s: an inline script", path, tag)
			}
		}
		if m := inline.Find(b); m != nil {
			t.Errorf("%s holds %q, which the Content-Security-Policy refuses or which leaves the origin", path, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	js, _ := files.ReadFile("assets/console.js")
	js = []byte(strings.ReplaceAll(string(js), `"http://www.w3.org/2000/svg"`, "")) // a namespace name, not a request
	if regexp.MustCompile(`https?://[a-z]`).Match(js) || strings.Contains(string(js), "innerHTML") || strings.Contains(string(js), "eval(") {
		t.Error("console.js names another origin, writes innerHTML or evaluates strings")
	}
}

func TestSecureHeaders(t *testing.T) {
	w := httptest.NewRecorder()
	secure(w)
	h := w.Result().Header
	for k, want := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"} {
		if h.Get(k) != want {
			t.Errorf("%s = %q, want %q", k, h.Get(k), want)
		}
	}
	if csp := h.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'self';") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}
}
