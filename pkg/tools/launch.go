package tools

import (
	"errors"
	"os"
	"os/exec"
)

// Launcher starts the processes of bash calls. The default runs bash -c
// directly; a sandbox (pkg/sandbox) returns a command that confines it.
type Launcher interface {
	// Command returns the unstarted command that runs argv in the workspace
	// directory dir with the environment env. bash sets its Stdout, Stderr
	// and SysProcAttr.Setpgid and starts it; release is called exactly once
	// after the command has ended (or failed to start).
	Command(dir string, argv, env []string) (cmd *exec.Cmd, release func(), err error)
}

// Starter is a Launcher that can also start a command itself, for one
// that has the process ready before the call (a sandbox's pre-started
// child). bash uses Start when the launcher has it.
type Starter interface {
	// Start runs argv in dir with env, its stdout and stderr out, as the
	// leader of a new process group, and returns the running process for
	// bash to wait for; release is called exactly once after it has ended
	// (Start calls it itself when it fails).
	Start(dir string, argv, env []string, out *os.File) (proc *os.Process, release func(), err error)
}

// WithLauncher makes bash start its commands through l.
func WithLauncher(l Launcher) Option {
	return func(e *env) error {
		if l == nil {
			return errors.New("tools: launcher is nil")
		}
		e.launch = l
		return nil
	}
}

// directLauncher runs commands as they are.
type directLauncher struct{}

func (directLauncher) Command(dir string, argv, env []string) (*exec.Cmd, func(), error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	return cmd, func() {}, nil
}
