package tools

import (
	"errors"
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
