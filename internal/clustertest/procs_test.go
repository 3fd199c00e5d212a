//go:build cluster

package clustertest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// proc is one process the test started.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed when the process has exited
}

// procs owns every process of a test and stops them by PID at the end.
type procs struct {
	t   *testing.T
	dir string
	wg  sync.WaitGroup
	mu  sync.Mutex
	all []*proc
}

func newProcs(t *testing.T, dir string) *procs {
	ps := &procs{t: t, dir: dir}
	t.Cleanup(ps.stopAll)
	return ps
}

// start runs bin with args; its stdout and stderr go to <dir>/<name>.log.
func (ps *procs) start(name, bin string, args ...string) *proc {
	ps.t.Helper()
	logPath := filepath.Join(ps.dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		ps.t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		ps.t.Fatalf("start %s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	ps.wg.Add(1)
	go func() {
		defer ps.wg.Done()
		cmd.Wait()
		f.Close()
		close(p.done)
	}()
	ps.mu.Lock()
	ps.all = append(ps.all, p)
	ps.mu.Unlock()
	ps.t.Logf("started %s (pid %d)", name, cmd.Process.Pid)
	return p
}

// kill9 sends SIGKILL to p's PID and waits for it to exit.
func (ps *procs) kill9(p *proc) {
	ps.t.Helper()
	if err := syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		ps.t.Fatalf("kill -9 %s (pid %d): %v", p.name, p.cmd.Process.Pid, err)
	}
	<-p.done
	ps.t.Logf("killed %s (pid %d) with SIGKILL", p.name, p.cmd.Process.Pid)
}

// stop sends SIGTERM to p's PID and waits up to grace, then SIGKILL.
func (ps *procs) stop(p *proc, grace time.Duration) {
	select {
	case <-p.done:
		return
	default:
	}
	syscall.Kill(p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		ps.t.Logf("%s (pid %d) did not stop within %s; SIGKILL", p.name, p.cmd.Process.Pid, grace)
		syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// stopAll stops every process, newest first (services before NATS), and
// prints the tail of each log if the test failed.
func (ps *procs) stopAll() {
	ps.mu.Lock()
	all := append([]*proc(nil), ps.all...)
	ps.mu.Unlock()
	began := time.Now()
	if ps.t.Failed() {
		ps.dumpStacks(all)
	}
	for i := len(all) - 1; i >= 0; i-- {
		ps.stop(all[i], 15*time.Second)
	}
	ps.wg.Wait()
	ps.t.Logf("phase stop %d processes: %s", len(all), time.Since(began).Round(time.Millisecond))
	if ps.t.Failed() {
		for _, p := range all {
			data, _ := os.ReadFile(p.log)
			lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
			ps.t.Logf("--- last lines of %s ---\n%s", p.name, strings.Join(lines[max(0, len(lines)-15):], "\n"))
		}
	}
}

// dumpStacks sends SIGQUIT to every live orchestrator, before anything is
// stopped: the Go runtime writes every goroutine's stack to stderr (the
// process's log) and exits, so a stalled session's actor can be read there.
func (ps *procs) dumpStacks(all []*proc) {
	for _, p := range all {
		if !strings.HasPrefix(p.name, "orchestrator") {
			continue
		}
		select {
		case <-p.done:
			continue
		default:
		}
		syscall.Kill(p.cmd.Process.Pid, syscall.SIGQUIT)
		select {
		case <-p.done:
			ps.t.Logf("%s (pid %d): SIGQUIT; its goroutine stacks are in %s", p.name, p.cmd.Process.Pid, p.log)
		case <-time.After(15 * time.Second):
			ps.t.Logf("%s (pid %d) did not exit within 15s of SIGQUIT", p.name, p.cmd.Process.Pid)
		}
	}
}

// run runs bin to completion and returns its stdout; stderr is in the error.
func run(ctx context.Context, bin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w\n%s%s", filepath.Base(bin), strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out), nil
}

// freePorts returns n TCP ports free on 127.0.0.1 at the time of asking.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var lns []net.Listener
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}

// waitHTTP polls url until it answers 200, p exits or the deadline passes.
func waitHTTP(t *testing.T, p *proc, url string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s did not answer 200 within %s (last: %v)", p.name, url, within, err)
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited while starting; see %s", p.name, p.log)
		case <-tick.C:
		}
	}
}

// build compiles pkg into dir and returns the binary's path, or returns the
// path in the environment variable env if it is set (a binary built
// elsewhere, e.g. from a clean checkout).
func build(t *testing.T, dir, name, pkg, env string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		t.Logf("%s: using %s=%s", name, env, p)
		return p
	}
	out := filepath.Join(dir, name)
	goBin := os.Getenv("GO")
	if goBin == "" {
		goBin = "go"
	}
	cmd := exec.Command(goBin, "build", "-o", out, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}
