package toolbus

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/workspace"
)

// resolveWorkspace returns the directory a call of session sid runs in: ws
// inside the tenant root root/<tenant> by pkg/workspace's rule (absolute,
// or relative to the tenant root, as a session entry records it; "" means
// root/<tenant>/<sid>), created if missing, symlinks resolved. Anything
// outside the tenant root is refused.
func resolveWorkspace(root string, sid events.SessionRef, ws string) (string, error) {
	rel, err := workspace.Rel(root, sid, ws)
	if err != nil {
		return "", err
	}
	p := workspace.Dir(root, sid, rel)
	if err := os.MkdirAll(p, 0o755); err != nil {
		return "", fmt.Errorf("workspace %q: %w", ws, err)
	}
	// Resolved again now that it exists: a symlink made since the session
	// was created does not lead out either.
	root = workspace.TenantRoot(root, sid.Tenant)
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("workspace root %s: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("workspace %q: %w", ws, err)
	}
	if !within(realRoot, real) {
		return "", fmt.Errorf("workspace %q resolves through a symlink to %s, outside the workspace root %s", ws, real, root)
	}
	return real, nil
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
