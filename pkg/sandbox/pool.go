package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/cairn-agents/cairn/pkg/sandbox/internal/child"
)

// Why a pool: most of what confinement adds to a call is the child's
// start, before it reads its request: the clone into new namespaces, the
// exec of this (large) binary and the Go runtime's and the packages' inits
// ahead of internal/child's (bash) or internal/toolchild's (file tools,
// which wait for pkg/tool's JSON Schema library: see the package doc). None
// of it depends on the call, so calls take a child started ahead of time,
// blocked reading its request, and a goroutine starts the next one once
// that call has ended, so that its start does not compete with the call
// for the CPU (between an agent's calls there is the model's time). Each
// kind has its pool: bash's children wait in their call's pids cgroup,
// the file tools' in none. The request and the call's output pipe (passed
// as a file descriptor, SCM_RIGHTS) go over a unix socket on the child's
// stdin; from there the child confines itself exactly as a child started
// for the call does. A child starts unconfined but namespaced, runs only
// this binary's code until it has its request, and is killed when the
// sandbox closes.

// poolSize is how many children of each kind wait ready: a burst of calls beyond it
// starts children on the calls' paths, as without a pool.
const poolSize = 2

type pool struct {
	sb    *Sandbox
	tool  bool          // children for the file tools (child.ArgWarmTool), not bash
	ready chan *warm    // started, waiting for a request
	want  chan struct{} // one token per child to start
	stop  chan struct{}
	wg    sync.WaitGroup
}

// warm is a started child waiting for its request on sock, in its call's
// pids cgroup already (joining one is slow: see prepare).
type warm struct {
	cmd    *exec.Cmd
	sock   *os.File // the parent's end of the child's stdin
	cgDone func()   // removes its cgroup once it has ended
}

func newPool(sb *Sandbox, tool bool) *pool {
	p := &pool{sb: sb, tool: tool, ready: make(chan *warm, poolSize), want: make(chan struct{}, poolSize), stop: make(chan struct{})}
	for range poolSize {
		p.want <- struct{}{}
	}
	p.wg.Go(p.fill)
	return p
}

// fill starts a child for each token until stop. A child that fails to
// start is logged and tried again a second later; calls meanwhile start
// their own.
func (p *pool) fill() {
	for {
		select {
		case <-p.want:
		case <-p.stop:
			return
		}
		w, err := p.sb.startWarm(p.tool)
		if err != nil {
			p.sb.log.Warn("sandbox: start a child ahead of a call", "tool", p.tool, "err", err)
			t := time.NewTimer(time.Second)
			select {
			case <-t.C:
				p.refill()
				continue
			case <-p.stop:
				t.Stop()
				return
			}
		}
		select {
		case p.ready <- w:
		case <-p.stop:
			w.kill()
			return
		}
	}
}

// take returns a ready child, or starts one when none is; pooled says
// which, and a pooled child's call calls refill once it has ended.
func (p *pool) take() (w *warm, pooled bool, err error) {
	select {
	case w := <-p.ready:
		return w, true, nil
	default:
		w, err := p.sb.startWarm(p.tool)
		return w, false, err
	}
}

// refillAfter makes *release ask for one more child once it has run.
func (p *pool) refillAfter(release *func()) {
	done := *release
	*release = func() { done(); p.refill() }
}

// refill asks for one more child.
func (p *pool) refill() {
	select {
	case p.want <- struct{}{}:
	default: // full: cannot happen, one token per child taken
	}
}

// close stops filling and kills the children that wait.
func (p *pool) close() {
	close(p.stop)
	p.wg.Wait()
	for {
		select {
		case w := <-p.ready:
			w.kill()
		default:
			return
		}
	}
}

// startWarm starts a child in the sandbox's namespaces, in a process group
// of its own (bash's, after the exec), waiting for its request: for bash,
// in its call's pids cgroup, or with tool, for a file tool (no cgroup: see
// prepare).
func (s *Sandbox) startWarm(tool bool) (*warm, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: socketpair: %w", err)
	}
	parent, theirs := os.NewFile(uintptr(fds[0]), "sandbox-request"), os.NewFile(uintptr(fds[1]), "sandbox-request-child")
	procs, cgDone := "", func() {}
	if !tool {
		if procs, cgDone, err = s.cgroup(); err != nil {
			_ = parent.Close()
			_ = theirs.Close()
			return nil, err
		}
	}
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = []string{child.Arg0, child.ArgWarm}
	if tool {
		cmd.Args[1] = child.ArgWarmTool
	} else if procs != "" {
		cmd.Args = append(cmd.Args, procs)
	}
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.Stdin = theirs
	cmd.SysProcAttr = childAttr(s.flags)
	cmd.SysProcAttr.Setpgid = true
	err = cmd.Start()
	_ = theirs.Close() // the child has its copy
	if err != nil {
		_ = parent.Close()
		cgDone()
		return nil, fmt.Errorf("sandbox: start a child: %w", err)
	}
	return &warm{cmd: cmd, sock: parent, cgDone: cgDone}, nil
}

// send gives the child its request and out as its stdout and stderr, then
// closes the socket (the child reads to its end).
func (w *warm) send(req child.Request, out *os.File) error {
	data, err := json.Marshal(req)
	if err != nil {
		return err
	}
	rc, err := w.sock.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	// The descriptor rides on the first byte; the rest is ordinary writes.
	if err := rc.Write(func(fd uintptr) bool {
		serr = syscall.Sendmsg(int(fd), data[:1], syscall.UnixRights(int(out.Fd())), nil, 0)
		return serr != syscall.EAGAIN
	}); err != nil {
		return err
	}
	if serr != nil {
		return fmt.Errorf("send the request: %w", serr)
	}
	if _, err := w.sock.Write(data[1:]); err != nil {
		return fmt.Errorf("send the request: %w", err)
	}
	return w.sock.Close()
}

// kill ends a child that will not get a request.
func (w *warm) kill() {
	_ = w.sock.Close()
	_ = w.cmd.Process.Kill() // gone already is fine
	_ = w.cmd.Wait()         // killed: its status says nothing
	w.cgDone()
}

// Start runs argv (bash -c) confined, in a child started ahead of the call,
// with out as its stdout and stderr; it is the leader of its process group.
// The environment is rebuilt as for [launcher.Command].
func (l launcher) Start(dir string, argv, env []string, out *os.File) (*os.Process, func(), error) {
	s := l.s
	req, release, err := s.prepare(child.Request{Mode: child.ModeExec, Workspace: dir, Argv: argv, Env: env}, true, false)
	if err != nil {
		return nil, nil, err
	}
	w, err := s.pool.serve(req, out, &release)
	if err != nil {
		return nil, nil, err
	}
	// Not our exec.Cmd's Wait: bash waits for the process itself.
	done := release
	return w.cmd.Process, func() { done(); w.cgDone() }, nil
}

// serve gives req and out to a ready child (one started now when none is)
// and returns it; a pooled child's refill is added to *release, which the
// caller runs once the call has ended. On error *release has run.
func (p *pool) serve(req child.Request, out *os.File, release *func()) (*warm, error) {
	// A child that died waiting (killed from outside) refuses the request
	// (EPIPE); each of those is replaced, then one started for the call.
	for attempt := 0; ; attempt++ {
		w, pooled, err := p.take()
		if err != nil {
			(*release)()
			return nil, err
		}
		err = w.send(req, out)
		if pooled {
			p.refillAfter(release)
		}
		if err == nil {
			return w, nil
		}
		w.kill()
		if !pooled || attempt >= poolSize || !errors.Is(err, syscall.EPIPE) {
			(*release)()
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
}
