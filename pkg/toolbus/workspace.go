package toolbus

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// resolveWorkspace returns the directory a call of session sid runs in: ws
// inside root (absolute, or relative to root; "" means root/sid), created if
// missing, symlinks resolved. Anything outside root is refused.
func resolveWorkspace(root, sid, ws string) (string, error) {
	var p string
	switch {
	case ws == "":
		p = filepath.Join(root, sid)
	case filepath.IsAbs(ws):
		p = filepath.Clean(ws)
	default:
		p = filepath.Join(root, ws)
	}
	if !within(root, p) {
		return "", fmt.Errorf("workspace %q is outside the workspace root %s", ws, root)
	}
	if err := os.MkdirAll(p, 0o755); err != nil {
		return "", fmt.Errorf("workspace %q: %w", ws, err)
	}
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
