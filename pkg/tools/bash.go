package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// drainGrace bounds how long bash waits for the end of output after its
// process group is gone: only a process that left the group (setsid) can
// still hold the pipe open.
const drainGrace = 2 * time.Second

// specGrace is added to the largest timeout in bash's spec so that a runner
// honouring TimeoutMs never cuts a command short of the timeout it asked for.
const specGrace = 30 * time.Second

// bashTool runs a shell command in the workspace.
type bashTool struct{ env *env }

type bashArgs struct {
	Command string   `json:"command"`
	Timeout *float64 `json:"timeout"`
}

// BashDetails is the Details of a bash result (and of its partial updates).
type BashDetails struct {
	// ExitCode is the shell's exit status; nil when it was killed by a signal
	// or is still running (partial updates).
	ExitCode   *int        `json:"exitCode"`
	Signal     string      `json:"signal,omitempty"`
	TimedOut   bool        `json:"timedOut,omitempty"`
	Aborted    bool        `json:"aborted,omitempty"`
	Truncation *Truncation `json:"truncation,omitempty"`
}

// Spec describes bash. A command may do anything, so bash is not idempotent.
func (t *bashTool) Spec() events.ToolSpec {
	e := t.env
	schema := fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "command": {"type": "string", "minLength": 1, "description": "Bash command to execute"},
    "timeout": {"type": "number", "exclusiveMinimum": 0, "maximum": %d, "description": "Timeout in seconds (default %d)"}
  },
  "required": ["command"],
  "additionalProperties": false
}`, int(e.bashMax/time.Second), int(e.bashTimeout/time.Second))
	s := spec("bash", fmt.Sprintf("Execute a bash command in the workspace directory. Returns stdout and stderr interleaved. "+
		"Output is truncated to the last %d lines or %s, whichever is hit first. The timeout defaults to %d seconds; "+
		"when it expires the command and every process it started are killed.",
		e.out.lines, formatSize(int64(e.out.bytes)), int(e.bashTimeout/time.Second)), schema, false)
	s.TimeoutMs = (e.bashMax + specGrace).Milliseconds()
	return s
}

// Execute runs the command with bash -c in its own process group, streaming
// its output through onUpdate. When the command ends, times out or ctx is
// cancelled, the whole group is killed with SIGKILL, so nothing it started
// in the background outlives the call. A timeout, a cancellation and a
// non-zero exit are error results carrying the output so far.
func (t *bashTool) Execute(ctx context.Context, call tool.Call, onUpdate func(tool.Result)) (tool.Result, error) {
	var a bashArgs
	if err := decodeArgs("bash", call.Arguments, &a, []string{"command", "timeout"}, []string{"command"}); err != nil {
		return tool.Result{}, err
	}
	if a.Command == "" {
		return tool.Result{}, argErr("command", "must not be empty")
	}
	timeout := t.env.bashTimeout
	if a.Timeout != nil {
		if *a.Timeout <= 0 || *a.Timeout > t.env.bashMax.Seconds() {
			return tool.Result{}, argErr("timeout", "must be more than 0 and at most %d seconds, got %v", int(t.env.bashMax.Seconds()), *a.Timeout)
		}
		timeout = time.Duration(*a.Timeout * float64(time.Second))
	}
	ws, release, err := t.env.workspace(call)
	if err != nil {
		return tool.Result{}, err
	}
	defer release()
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}

	pr, pw, err := os.Pipe()
	if err != nil {
		return tool.Result{}, fmt.Errorf("bash: %w", err)
	}
	defer func() { _ = pr.Close() }() // the read end: nothing to lose
	proc, done, err := t.start(ws.dir, []string{"bash", "-c", a.Command}, t.env.commandEnv(ws.dir), pw)
	if err != nil {
		return tool.Result{}, fmt.Errorf("bash: %w", errors.Join(err, pw.Close()))
	}
	defer done()
	_ = pw.Close() // our copy of the write end; the shell writes through its own
	pgid := proc.Pid

	s := &stream{out: tail{l: t.env.out}, dirty: make(chan struct{}, 1), stop: make(chan struct{})}
	var wg sync.WaitGroup
	readDone := make(chan struct{})
	wg.Go(func() {
		defer close(readDone)
		s.copy(pr)
	})
	if onUpdate != nil {
		wg.Go(func() { s.publish(onUpdate, t.env.updateEvery) })
	}
	// The outcome is read from the process state below: with an *os.File
	// for output, Wait's error only restates the exit status.
	waited := make(chan struct{})
	var ps *os.ProcessState
	wg.Go(func() {
		var werr error
		if ps, werr = proc.Wait(); werr != nil {
			ps = nil
		}
		close(waited)
	})

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var d BashDetails
	select {
	case <-waited:
	case <-timer.C:
		d.TimedOut = true
		killGroup(pgid)
		<-waited
	case <-ctx.Done():
		d.Aborted = true
		killGroup(pgid)
		<-waited
	}
	// The shell is gone; end whatever it left running in its group.
	killGroup(pgid)
	drain := time.NewTimer(drainGrace)
	select {
	case <-readDone:
	case <-drain.C:
		_ = pr.Close() // unblocks the reader
	}
	drain.Stop()
	close(s.stop)
	wg.Wait()

	if ps == nil { // not our child: cannot happen for a process we started
		return tool.Result{}, errors.New("bash: wait for the shell failed")
	}
	if st, ok := ps.Sys().(syscall.WaitStatus); ok && st.Signaled() {
		d.Signal = st.Signal().String()
	} else {
		code := ps.ExitCode()
		d.ExitCode = &code
	}
	text, tr := s.out.snapshot()
	if tr.Truncated {
		d.Truncation = &tr
	}
	return bashResult(text, tr, d, timeout), nil
}

// start runs argv with out as its stdout and stderr in a new process
// group, through the launcher's Start if it has one.
func (t *bashTool) start(dir string, argv, env []string, out *os.File) (*os.Process, func(), error) {
	if st, ok := t.env.launch.(Starter); ok {
		return st.Start(dir, argv, env, out)
	}
	cmd, done, err := t.env.launch.Command(dir, argv, env)
	if err != nil {
		return nil, nil, err
	}
	cmd.Stdout, cmd.Stderr = out, out // one pipe: stdout and stderr interleave in order
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		done()
		return nil, nil, err
	}
	return cmd.Process, done, nil
}

func bashResult(text string, tr Truncation, d BashDetails, timeout time.Duration) tool.Result {
	if tr.Truncated {
		text = strings.TrimSuffix(text, "\n")
		first := tr.TotalLines - tr.OutputLines + 1
		cut := tr.TotalBytes - int64(tr.OutputBytes)
		switch {
		case tr.LinePartial:
			text += fmt.Sprintf("\n\n[Showing the last %s of line %d; %s of earlier output cut. Redirect output to a file and use read or grep to see all of it.]",
				formatSize(int64(tr.OutputBytes)), tr.TotalLines, formatSize(cut))
		default:
			text += fmt.Sprintf("\n\n[Showing lines %d-%d of %d; %d earlier lines (%s) cut. Redirect output to a file and use read or grep to see all of it.]",
				first, tr.TotalLines, tr.TotalLines, first-1, formatSize(cut))
		}
	}
	status := ""
	switch {
	case d.TimedOut:
		status = fmt.Sprintf("Command timed out after %s; it and every process it started were killed", strconv.FormatFloat(timeout.Seconds(), 'f', -1, 64)+" seconds")
	case d.Aborted:
		status = "Command aborted; it and every process it started were killed"
	case d.Signal != "":
		status = "Command was killed by signal: " + d.Signal
	case *d.ExitCode != 0:
		status = fmt.Sprintf("Command exited with code %d", *d.ExitCode)
	}
	if status == "" {
		if text == "" {
			text = "(no output)"
		}
		return textResult(text, d)
	}
	if text = strings.TrimSuffix(text, "\n"); text != "" {
		text += "\n\n"
	}
	return errorResult(text+status, d)
}

// killGroup sends SIGKILL to every process of the group pgid.
func killGroup(pgid int) {
	// ESRCH (the group is already empty) is the only error expected for a
	// group we created, and it means there is nothing left to kill.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// commandEnv returns the environment of a bash command run in dir.
func (e *env) commandEnv(dir string) []string {
	if e.bashEnv != nil {
		return append(e.bashEnv, "PWD="+dir)
	}
	path := os.Getenv("PATH")
	if path == "" {
		path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	}
	vars := []string{"PATH=" + path, "PWD=" + dir, "TERM=dumb"}
	for _, k := range []string{"HOME", "USER", "LANG", "LC_ALL", "TZ", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			vars = append(vars, k+"="+v)
		}
	}
	return vars
}
