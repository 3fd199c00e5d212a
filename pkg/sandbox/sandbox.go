package sandbox

import (
	"errors"
	"fmt"
	"github.com/cairn-agents/cairn/pkg/sandbox/internal/child"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"
)

// probe is Probe; tests replace it to stand for a kernel that lacks a layer.
var probe = Probe

// ErrUnavailable is matched by the error of [New] at level Required when the
// kernel lacks a layer; the message names every missing one.
var ErrUnavailable = errors.New("sandbox unavailable")

// Sandbox starts confined children for tool calls. It is safe for
// concurrent use; Close it to remove its temp and cgroup directories.
type Sandbox struct {
	level    Level
	policy   Policy
	features Features
	missing  []string
	flags    uintptr  // namespaces of each child
	cg       *cgroups // nil: no pids cgroup
	tmpRoot  string   // per-call temp directories live here
	log      *slog.Logger
	pool     *pool  // children started ahead of bash calls; nil at Off
	tools    *pool  // children started ahead of file tool calls; nil at Off
	proxy    *proxy // the allowed-hosts proxy; nil without AllowHosts
	counter  *prometheus.CounterVec
	cleanup  sync.WaitGroup // cgroup removals under way
}

// New probes the kernel (see [Probe]) and returns a sandbox at level. At
// Required it fails with [ErrUnavailable] naming what is missing; at
// BestEffort it logs what is missing and confines with the rest; at Off it
// logs a warning and confines nothing.
func New(level Level, policy Policy, log *slog.Logger) (*Sandbox, error) {
	if err := policy.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Sandbox{level: level, policy: policy.withDefaults(), log: log, counter: newProxyCounter()}
	if level == Off {
		log.Warn("sandbox off: tool calls run unconfined, with every permission of the toolrunner (--sandbox off)")
		return s, nil
	}
	s.features = probe()
	s.missing = s.features.Missing(s.policy)
	if len(s.missing) > 0 && level == Required {
		return nil, fmt.Errorf("%w: the kernel or the process lacks %s; run where they exist or choose --sandbox best-effort",
			ErrUnavailable, strings.Join(s.missing, ", "))
	}
	if s.features.UserNS {
		s.flags = namespaces
		if s.features.NetNS && len(s.policy.AllowPorts) == 0 {
			s.flags |= syscall.CLONE_NEWNET
		}
	}
	if s.features.Root && s.features.Processes != "" {
		cg, err := openCgroups()
		if err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		s.cg = cg
	}
	tmp, err := os.MkdirTemp("", "cairn-sandbox-")
	if err != nil {
		s.closeCgroups()
		return nil, fmt.Errorf("sandbox: temp directory: %w", err)
	}
	s.tmpRoot = tmp
	if len(s.policy.AllowHosts) > 0 {
		if s.flags&syscall.CLONE_NEWNET == 0 {
			log.Warn("sandbox best-effort: no network namespace, so no proxy to the allowed hosts: calls have no network")
		} else if s.proxy, err = startProxy(filepath.Join(tmp, "proxy.sock"), s.policy.AllowHosts, s.counter, log); err != nil {
			s.closeCgroups()
			_ = os.RemoveAll(tmp)
			return nil, err
		}
	}
	s.pool, s.tools = newPool(s, false), newPool(s, true)
	if len(s.missing) > 0 {
		log.Warn("sandbox best-effort: confining tool calls without what the kernel lacks", "missing", strings.Join(s.missing, ", "),
			"features", s.features.String())
	} else {
		log.Info("sandbox in force", "level", level.String(), "features", s.features.String())
	}
	return s, nil
}

// Collector is the sandbox's metrics: cairn_sandbox_proxy_requests_total
// by decision (allowed, refused), the requests of calls to the
// allowed-hosts proxy.
func (s *Sandbox) Collector() prometheus.Collector { return s.counter }

// Level is the level the sandbox was made with.
func (s *Sandbox) Level() Level { return s.level }

// Features is what the probe found (zero at level Off).
func (s *Sandbox) Features() Features { return s.features }

// Missing lists what the level Required would need and this machine lacks.
func (s *Sandbox) Missing() []string { return s.missing }

// Close kills the children waiting for calls and removes the sandbox's
// temp and cgroup directories. Calls must have ended.
func (s *Sandbox) Close() error {
	if s.pool != nil {
		s.pool.close()
		s.tools.close()
	}
	if s.proxy != nil {
		s.proxy.close()
	}
	s.cleanup.Wait()
	s.closeCgroups()
	if s.tmpRoot != "" {
		return os.RemoveAll(s.tmpRoot)
	}
	return nil
}

func (s *Sandbox) closeCgroups() {
	if s.cg != nil {
		s.cg.close()
	}
}

// confineFor returns what a child applies under this sandbox; exec children
// (bash) also get the address-space limit.
func (s *Sandbox) confineFor(forExec bool) child.Confine {
	p, f := s.policy, s.features
	c := child.Confine{
		MountProc: f.ProcMount && s.flags&syscall.CLONE_NEWNS != 0,
		Landlock:  f.LandlockABI >= 1,
		TCP:       f.LandlockABI >= 4,
		Ports:     p.AllowPorts,
		ReadOnly:  p.ReadOnly,
		Rlimits:   child.Rlimits{CPUSeconds: uint64(p.CPUTime.Seconds()), FSize: p.FileSize, NoFile: p.OpenFiles},
	}
	if forExec {
		c.Rlimits.AS = p.Memory
		if s.proxy != nil {
			// Connect to the bridge only; nothing else is routable.
			c.Proxy, c.ProxyPort, c.Ports = s.proxy.ln.Addr().String(), ProxyPort, []uint16{ProxyPort}
		}
	}
	if !f.Root && f.UserNS {
		c.Rlimits.NProc = p.Processes
	}
	return c
}

// command returns the unstarted child for req (for an exec child, req.Env
// is the caller's environment, replaced by [cleanEnv]) and what to release after it
// has ended: its temp directory and cgroup.
func (s *Sandbox) command(req child.Request, forExec bool) (*exec.Cmd, func(), error) {
	req, release, err := s.prepare(req, forExec, forExec)
	if err != nil {
		return nil, nil, err
	}
	cmd, err := childCommand(req, s.flags)
	if err != nil {
		release()
		return nil, nil, err
	}
	cmd.Dir = req.Workspace
	return cmd, release, nil
}

// prepare fills in what req's child applies and makes the call's temp
// directory and, with cgroup, its pids cgroup; release removes them after
// the call has ended. The file tools' children get no cgroup: they run our
// Go code, which starts no processes, and joining one costs a child
// milliseconds (the kernel waits for an RCU grace period to move a
// process between cgroups).
func (s *Sandbox) prepare(req child.Request, forExec, cgroup bool) (child.Request, func(), error) {
	req.Confine = s.confineFor(forExec)
	tmp, err := os.MkdirTemp(s.tmpRoot, "call-")
	if err != nil {
		return req, nil, fmt.Errorf("sandbox: temp directory: %w", err)
	}
	req.Tmp = tmp
	req.Confine.HideRun = req.Confine.MountProc && !under("/run", req.Workspace) && !under("/run", tmp)
	if forExec {
		req.Env = cleanEnv(req.Workspace, tmp, req.Env)
		if req.Confine.Proxy != "" {
			u := fmt.Sprintf("http://127.0.0.1:%d", ProxyPort)
			for _, k := range []string{"HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy"} {
				req.Env = append(req.Env, k+"="+u)
			}
		}
	}
	release := func() { _ = os.RemoveAll(tmp) } // best effort: the root goes at Close
	if cgroup {
		procs, done, err := s.cgroup()
		if err != nil {
			release()
			return req, nil, err
		}
		req.Confine.Cgroup = procs
		release = func() {
			_ = os.RemoveAll(tmp)
			done()
		}
	}
	return req, release, nil
}

// cgroup makes a call's pids cgroup and returns its cgroup.procs file ("" and
// a no-op without cgroups) and the function removing it after the call. The
// cgroup empties a moment after the child is reaped; the removal runs off
// the call's path so that wait stays out of every call.
func (s *Sandbox) cgroup() (string, func(), error) {
	if s.cg == nil {
		return "", func() {}, nil
	}
	procs, done, err := s.cg.call(s.policy.Processes)
	if err != nil {
		return "", nil, fmt.Errorf("sandbox: %w", err)
	}
	return procs, func() { s.cleanup.Go(done) }, nil
}

// under reports whether p, its symlinks resolved, is dir or inside it.
func under(dir, p string) bool {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		real = p
	}
	return real == dir || strings.HasPrefix(real, dir+"/")
}
