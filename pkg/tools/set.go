package tools

import (
	"fmt"
	"slices"
	"time"

	"github.com/cairn-agents/cairn/pkg/tool"
)

// Names of the built-in tools, in the order [Set.All] returns them.
var Names = []string{"read", "write", "edit", "bash", "grep", "find", "ls"}

// Set is the built-in tools of one workspace root.
type Set struct {
	env    *env
	tools  []tool.Tool
	byName map[string]tool.Tool
}

// env is what every tool of a set shares.
type env struct {
	ws          *Workspace
	out         limits
	bashTimeout time.Duration // default when a call gives none
	bashMax     time.Duration // largest timeout a call may ask for
	bashEnv     []string      // nil: the minimal default
	updateEvery time.Duration // bash partial updates, at most this often
	launch      Launcher      // starts bash commands
}

// Option configures [New].
type Option func(*env) error

// WithOutputLimit caps every tool's text output at lines lines and bytes
// bytes (defaults [DefaultMaxLines], [DefaultMaxBytes]).
func WithOutputLimit(lines, bytes int) Option {
	return func(e *env) error {
		if lines < 1 || bytes < 64 {
			return fmt.Errorf("tools: output limit must be at least 1 line and 64 bytes, got %d lines, %d bytes", lines, bytes)
		}
		e.out = limits{lines: lines, bytes: bytes}
		return nil
	}
}

// WithBashTimeout sets the timeout of a bash call that gives none (default
// 180s) and the largest one a call may ask for (default 1h).
func WithBashTimeout(def, maxTimeout time.Duration) Option {
	return func(e *env) error {
		if def <= 0 || maxTimeout < def {
			return fmt.Errorf("tools: bash timeouts must satisfy 0 < default <= max, got default %v, max %v", def, maxTimeout)
		}
		e.bashTimeout, e.bashMax = def, maxTimeout
		return nil
	}
}

// WithBashEnv sets the environment of bash commands ("KEY=value" entries).
// By default a command sees only PATH, LANG, LC_ALL, TZ and TMPDIR from the
// process, HOME and PWD set to the workspace, and TERM=dumb: a runner's
// credentials do not leak into commands a model writes.
func WithBashEnv(vars []string) Option {
	return func(e *env) error {
		e.bashEnv = slices.Clone(vars)
		return nil
	}
}

// WithUpdateInterval sets how often at most bash sends partial output
// (default 100ms).
func WithUpdateInterval(d time.Duration) Option {
	return func(e *env) error {
		if d <= 0 {
			return fmt.Errorf("tools: update interval must be positive, got %v", d)
		}
		e.updateEvery = d
		return nil
	}
}

// New returns the built-in tools confined to the directory root, which must
// exist. A call whose Workspace is set is confined to that directory instead;
// it must lie inside root and is created when missing. Close the set to
// release root's handle.
func New(root string, opts ...Option) (*Set, error) {
	e := &env{
		out:         limits{lines: DefaultMaxLines, bytes: DefaultMaxBytes},
		bashTimeout: 180 * time.Second,
		bashMax:     time.Hour,
		updateEvery: 100 * time.Millisecond,
		launch:      directLauncher{},
	}
	for _, o := range opts {
		if err := o(e); err != nil {
			return nil, err
		}
	}
	ws, err := OpenWorkspace(root)
	if err != nil {
		return nil, err
	}
	e.ws = ws
	s := &Set{env: e, tools: []tool.Tool{
		&readTool{e}, &writeTool{e}, &editTool{e}, &bashTool{e}, &grepTool{e}, &findTool{e}, &lsTool{e},
	}, byName: map[string]tool.Tool{}}
	for _, t := range s.tools {
		s.byName[t.Spec().Name] = t
	}
	return s, nil
}

// All returns every built-in tool, in the order of [Names].
func (s *Set) All() []tool.Tool { return slices.Clone(s.tools) }

// Get returns the built-in tool called name.
func (s *Set) Get(name string) (tool.Tool, bool) {
	t, ok := s.byName[name]
	return t, ok
}

// Workspace returns the set's root workspace.
func (s *Set) Workspace() *Workspace { return s.env.ws }

// Close releases the root's directory handle; the tools fail afterwards.
func (s *Set) Close() error { return s.env.ws.Close() }

// workspace returns the workspace of call and a function releasing it.
func (e *env) workspace(call tool.Call) (*Workspace, func(), error) {
	if call.Workspace == "" || call.Workspace == e.ws.dir {
		return e.ws, func() {}, nil
	}
	ws, err := e.ws.Sub(call.Workspace, true)
	if err != nil {
		return nil, nil, fmt.Errorf("call workspace: %w", err)
	}
	return ws, func() { _ = ws.Close() }, nil // an os.Root: a directory handle, nothing buffered
}

// OutputLimit returns the lines and bytes every tool's text output is capped at.
func (s *Set) OutputLimit() (lines, bytes int) { return s.env.out.lines, s.env.out.bytes }
