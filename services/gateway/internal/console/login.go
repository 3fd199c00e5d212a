package console

import (
	"net/http"
	"strings"
)

// maxLoginBytes bounds the login form: a key or an OIDC token fits.
const maxLoginBytes = 16 << 10

func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	c.render(w, http.StatusOK, "login", view{Title: "Log in", Page: "login"})
}

// login checks the key of the form and keeps it in the console cookie.
// The form has no cookie to bind a CSRF token to yet; its origin is
// checked instead, so no other site can log a browser in as someone else.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	if err := CheckOrigin(r); err != nil {
		c.render(w, http.StatusForbidden, "login", view{Title: "Log in", Page: "login", Error: err.Error()})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxLoginBytes)
	if err := r.ParseForm(); err != nil {
		c.render(w, http.StatusBadRequest, "login", view{Title: "Log in", Page: "login", Error: "the login form could not be read (is it larger than 16 KiB?)"})
		return
	}
	key := strings.TrimSpace(r.PostForm.Get("key"))
	if key == "" {
		c.render(w, http.StatusBadRequest, "login", view{Title: "Log in", Page: "login", Error: "enter an API key"})
		return
	}
	if _, err := c.cfg.Authenticate(r.Context(), key); err != nil {
		c.render(w, http.StatusUnauthorized, "login", view{Title: "Log in", Page: "login", Error: "Login refused: " + err.Error()})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: key, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: int(c.cfg.CookieMaxAge.Seconds())})
	secure(w)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// logout clears the cookie. It is a CSRF-checked form: no other site can
// log the browser out.
func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	secure(w)
	tok, ok := Token(r)
	if !ok {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxLoginBytes)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "the logout form could not be read", http.StatusBadRequest)
		return
	}
	if err := CheckCSRF(r, tok, r.PostForm.Get("csrf")); err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	c.clearCookie(w, r)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

func (c *Console) clearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: -1})
}
