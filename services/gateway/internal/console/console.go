package console

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"regexp"
	"time"
)

//go:embed assets templates
var files embed.FS

// Who is the principal of a console request, as the gateway authenticated it.
type Who struct {
	ID     string // "key:<id>" or "oidc:<sub>"; never the credential
	Tenant string
	Role   string
	// CanAct: the role may send commands and create sessions (member and up).
	CanAct bool
	// Admin: the platform admin, who may act for any tenant.
	Admin bool
}

// Config configures a Console.
type Config struct {
	// Authenticate checks a credential exactly as the API does. Its error's
	// message is shown to the user, so it never holds the credential.
	// Required.
	Authenticate func(ctx context.Context, credential string) (Who, error)
	// API is the gateway's own handler: the audit verification reads the
	// records route through it with the caller's credential. Required.
	API http.Handler
	// Logger; default slog.Default() (the gateway passes its own).
	Logger *slog.Logger
	// CookieMaxAge bounds a login. Default 12 h.
	CookieMaxAge time.Duration
}

// Console serves the web console's pages and assets.
type Console struct {
	cfg    Config
	pages  map[string]*template.Template
	assets http.Handler
}

// New builds a Console.
func New(cfg Config) (*Console, error) {
	if cfg.Authenticate == nil || cfg.API == nil {
		return nil, errors.New("console: Authenticate and API are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.CookieMaxAge == 0 {
		cfg.CookieMaxAge = 12 * time.Hour
	}
	c := &Console{cfg: cfg, pages: map[string]*template.Template{}}
	for _, p := range []string{"login", "sessions", "session", "usage", "approvals"} {
		t, err := template.ParseFS(files, "templates/layout.html", "templates/"+p+".html")
		if err != nil {
			return nil, err
		}
		c.pages[p] = t
	}
	sub, err := fs.Sub(files, "assets")
	if err != nil {
		return nil, err
	}
	c.assets = http.StripPrefix("/assets/", http.FileServerFS(sub))
	return c, nil
}

// Register adds the console's routes to mux. handle wraps each (the
// gateway instruments them); patterns are Go 1.22 ServeMux patterns.
func (c *Console) Register(handle func(pattern string, h http.HandlerFunc)) {
	handle("GET /{$}", c.page("sessions", "Sessions"))
	handle("GET /sessions/{id}", c.sessionPage)
	handle("GET /usage", c.page("usage", "Usage"))
	handle("GET /approvals", c.page("approvals", "Approvals"))
	handle("GET /login", c.loginPage)
	handle("POST /login", c.login)
	handle("POST /logout", c.logout)
	handle("GET /assets/", c.asset)
	handle("GET /sessions/{id}/verify", c.verify)
}

// secure sets the headers every console response carries.
func secure(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

func (c *Console) asset(w http.ResponseWriter, r *http.Request) {
	secure(w)
	w.Header().Set("Cache-Control", "no-cache")
	c.assets.ServeHTTP(w, r)
}

// view is what a page template gets.
type view struct {
	Title   string
	Page    string
	Who     Who
	CSRF    string
	Session string // the session page's id
	Error   string // the login page's refusal
}

// principal authenticates r's cookie; on failure it sends the browser to
// the login page (clearing a refused cookie) and returns false.
func (c *Console) principal(w http.ResponseWriter, r *http.Request) (Who, string, bool) {
	tok, ok := Token(r)
	if !ok {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return Who{}, "", false
	}
	who, err := c.cfg.Authenticate(r.Context(), tok)
	if err != nil {
		c.clearCookie(w, r)
		c.render(w, http.StatusUnauthorized, "login", view{Title: "Log in", Page: "login", Error: "Your login is no longer valid: " + err.Error()})
		return Who{}, "", false
	}
	return who, tok, true
}

func (c *Console) page(name, title string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		who, tok, ok := c.principal(w, r)
		if !ok {
			return
		}
		c.render(w, http.StatusOK, name, view{Title: title, Page: name, Who: who, CSRF: CSRFToken(tok)})
	}
}

// sessionIDs is DESIGN §2's session id.
var sessionIDs = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func (c *Console) sessionPage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !sessionIDs.MatchString(id) {
		secure(w)
		http.Error(w, "a session id is 1-64 characters of A-Z a-z 0-9 _ -", http.StatusBadRequest)
		return
	}
	who, tok, ok := c.principal(w, r)
	if !ok {
		return
	}
	c.render(w, http.StatusOK, "session", view{Title: "Session " + id, Page: "session", Who: who, CSRF: CSRFToken(tok), Session: id})
}

func (c *Console) render(w http.ResponseWriter, status int, name string, v view) {
	secure(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if err := c.pages[name].ExecuteTemplate(w, "layout", v); err != nil {
		c.cfg.Logger.Debug("console: render failed", "page", name, "err", err)
	}
}
