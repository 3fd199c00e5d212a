package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairn-agents/cairn/pkg/events"
)

// TenantRoot is the directory of tenant's workspaces under root:
// root/<tenant>. No session of one tenant works outside its tenant root.
func TenantRoot(root, tenant string) string { return filepath.Join(root, tenant) }

// Dir is the directory of workspace rel (as [Rel] returned it) of session
// r under root.
func Dir(root string, r events.SessionRef, rel string) string {
	return filepath.Join(TenantRoot(root, r.Tenant), rel)
}

// Rel returns session r's workspace ws as a clean path relative to its
// tenant root root/<tenant> ([TenantRoot]; "." for the tenant root itself;
// r.ID when ws is empty), or why ws is refused. A relative ws is relative
// to the tenant root, an absolute one must lie inside it: no session
// reaches another tenant's workspaces, whatever path it names.
//
// root may be empty when the caller does not know it: then only relative
// paths can be checked, and an absolute one is refused. When root names a
// directory on this host, the part of the workspace that exists is resolved,
// symlinks included, and must stay inside the tenant root's real directory;
// where the root does not exist here (an orchestrator on another host than its
// toolrunners), the check is lexical and the toolrunner checks the rest.
func Rel(root string, r events.SessionRef, ws string) (string, error) {
	if err := r.Validate(); err != nil {
		return "", err
	}
	if ws == "" {
		return r.ID, nil
	}
	if root != "" {
		root = TenantRoot(root, r.Tenant)
	}
	if strings.IndexByte(ws, 0) >= 0 {
		return "", refuse("%q has a NUL byte", ws)
	}
	var rel string
	switch {
	case filepath.IsAbs(ws) && root == "":
		return "", refuse("%q is absolute, and the workspace root is not known here (start the service with --workspace-root, or give a path relative to the tenant's workspace root)", ws)
	case filepath.IsAbs(ws):
		r, ok := inside(root, filepath.Clean(ws))
		if !ok {
			return "", refuse("%q is outside the tenant's workspace root %s", ws, root)
		}
		rel = r
	default:
		rel = filepath.Clean(ws)
		if !filepath.IsLocal(rel) {
			return "", refuse("%q is outside the tenant's workspace root: a relative workspace may not go up with \"..\"", ws)
		}
	}
	if root != "" {
		if err := checkLinks(root, rel, ws); err != nil {
			return "", err
		}
	}
	return rel, nil
}

// inside returns p relative to root when p is inside it, comparing with
// root both as given and with its symlinks resolved (a root reached through
// a symlink, like /tmp on some systems).
func inside(root, p string) (string, bool) {
	roots := []string{root}
	if abs, err := filepath.Abs(root); err == nil && abs != root {
		roots = append(roots, abs)
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		roots = append(roots, real)
	}
	for _, r := range roots {
		if rel, err := filepath.Rel(r, p); err == nil && filepath.IsLocal(rel) {
			return rel, true
		}
	}
	return "", false
}

// checkLinks resolves the deepest existing directory of root/rel and
// refuses rel if a symlink takes it out of root. A root that does not
// exist yet (a tenant's first workspace) holds no symlink.
func checkLinks(root, rel, ws string) error {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil // the root is not on this host (or not yet): lexical check only
	}
	p := filepath.Join(realRoot, rel)
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			if _, ok := inside(realRoot, real); !ok {
				return refuse("%q leads through a symlink to %s, outside the tenant's workspace root %s", ws, real, root)
			}
			return nil
		}
		if !os.IsNotExist(err) {
			return refuse("%q: %v", ws, err)
		}
		if p == realRoot {
			return nil
		}
		p = filepath.Dir(p)
	}
}

func refuse(format string, args ...any) error {
	return &events.FieldError{Field: "workspace", Problem: fmt.Sprintf(format, args...)}
}
