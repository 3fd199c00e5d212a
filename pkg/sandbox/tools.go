package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/cairn-agents/cairn/pkg/sandbox/internal/child"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
	"github.com/cairn-agents/cairn/pkg/tools"
)

// Tools returns the built-in tools over root (pkg/tools), each call run
// confined: bash's command is started through the sandbox child, which
// confines itself and then execs bash -c; every other tool runs its Go code
// inside a child confined to the call's workspace, the call going in on
// stdin and the result coming back on stdout. At level Off it returns the
// plain tools. Close the returned set when done.
func (s *Sandbox) Tools(root string, opts ...tools.Option) (*tools.Set, []tool.Tool, error) {
	if s.level == Off {
		set, err := tools.New(root, opts...)
		if err != nil {
			return nil, nil, err
		}
		return set, set.All(), nil
	}
	set, err := tools.New(root, append(opts, tools.WithLauncher(launcher{s}))...)
	if err != nil {
		return nil, nil, err
	}
	var out []tool.Tool
	for _, t := range set.All() {
		if t.Spec().Name == "bash" {
			out = append(out, t)
			continue
		}
		out = append(out, &confined{sb: s, set: set, inner: t})
	}
	return set, out, nil
}

// launcher starts bash commands in the sandbox child.
type launcher struct{ s *Sandbox }

// Command returns the child that confines itself and execs argv. The
// environment is rebuilt: only LANG, LC_ALL, TZ and TERM are kept from env;
// PATH is the system directories, HOME and PWD the workspace, TMPDIR the
// call's own temp directory.
func (l launcher) Command(dir string, argv, env []string) (*exec.Cmd, func(), error) {
	return l.s.command(child.Request{Mode: child.ModeExec, Workspace: dir, Argv: argv, Env: env}, true)
}

func cleanEnv(dir, tmp string, env []string) []string {
	out := []string{"PATH=" + child.DefaultPath, "HOME=" + dir, "PWD=" + dir, "TMPDIR=" + tmp}
	kept := map[string]bool{"LANG": true, "LC_ALL": true, "TZ": true, "TERM": true}
	for _, kv := range env {
		if k, _, ok := strings.Cut(kv, "="); ok && kept[k] {
			out = append(out, kv)
		}
	}
	return out
}

// confined runs a Go file tool in a confined child.
type confined struct {
	sb    *Sandbox
	set   *tools.Set
	inner tool.Tool
}

func (c *confined) Spec() events.ToolSpec { return c.inner.Spec() }

// Execute resolves the call's workspace as the plain tool would (creating
// it), then runs the tool in a child confined to it. Cancelling ctx kills
// the child. A child that fails to confine itself is an error naming why.
func (c *confined) Execute(ctx context.Context, call tool.Call, _ func(tool.Result)) (tool.Result, error) {
	name := c.inner.Spec().Name
	ws := c.set.Workspace()
	dir := ws.Dir()
	if call.Workspace != "" && call.Workspace != dir {
		sub, err := ws.Sub(call.Workspace, true)
		if err != nil {
			return tool.Result{}, fmt.Errorf("call workspace: %w", err)
		}
		dir = sub.Dir()
		_ = sub.Close() // a directory handle
	}
	lines, bytesMax := c.set.OutputLimit()
	callJSON, err := json.Marshal(call)
	if err != nil {
		return tool.Result{}, err
	}
	req := child.Request{Mode: child.ModeTool, Workspace: dir, Tool: name, Call: callJSON, Lines: lines, Bytes: bytesMax}
	out, exit, err := c.sb.runTool(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, err
		}
		return tool.Result{}, fmt.Errorf("sandbox: %s: %w", name, err)
	}
	if exit != nil {
		return tool.Result{}, fmt.Errorf("sandbox: %s: %v: %s", name, exit, strings.TrimSpace(string(out)))
	}
	var resp child.Response
	if err := json.Unmarshal(out, &resp); err != nil {
		return tool.Result{}, fmt.Errorf("sandbox: %s: decode the result: %w", name, err)
	}
	if resp.Error != "" {
		return tool.Result{}, &childError{msg: resp.Error, kind: resp.Kind}
	}
	var res tool.Result
	if len(resp.Result) == 0 {
		return tool.Result{}, fmt.Errorf("sandbox: %s: the child returned no result", name)
	}
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		return tool.Result{}, fmt.Errorf("sandbox: %s: decode the result: %w", name, err)
	}
	return res, nil
}

// runTool runs req in a child started ahead for a file tool (one started
// now when none waits) and returns what it wrote on stdout and stderr (one
// pipe: the JSON response, or "sandbox: ..." when it could not confine
// itself) and, when it failed, how it ended. Cancelling ctx kills the
// child and returns ctx.Err().
func (s *Sandbox) runTool(ctx context.Context, req child.Request) ([]byte, *exec.ExitError, error) {
	req, release, err := s.prepare(req, false, false)
	if err != nil {
		return nil, nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		release()
		return nil, nil, fmt.Errorf("output pipe: %w", err)
	}
	defer func() { _ = r.Close() }()
	wc, err := s.tools.serve(req, w, &release)
	_ = w.Close() // the child has its copy, or there is none
	if err != nil {
		return nil, nil, err
	}
	defer release()
	var out []byte
	var rerr error
	read := make(chan struct{})
	go func() { out, rerr = io.ReadAll(r); close(read) }() // ends when the child does
	select {
	case <-read:
	case <-ctx.Done():
		_ = wc.cmd.Process.Kill() // gone already is fine
		<-read
		_ = wc.cmd.Wait() // killed: its exit status says nothing
		return nil, nil, ctx.Err()
	}
	werr := wc.cmd.Wait()
	if rerr != nil {
		return nil, nil, fmt.Errorf("read the result: %w", rerr)
	}
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		return out, ee, nil
	}
	return out, nil, werr
}

// childError is a tool's error as the child reported it.
type childError struct{ msg, kind string }

func (e *childError) Error() string { return e.msg }

// Is matches what the tool's own error matched.
func (e *childError) Is(target error) bool {
	switch e.kind {
	case child.KindOutside:
		return target == tools.ErrOutside
	case child.KindInvalid:
		return target == events.ErrInvalid
	}
	return false
}
