package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/cairn-agents/cairn/pkg/sandbox/internal/child"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// Features is what the kernel and the process's privileges offer the
// sandbox, as [Probe] found it by starting a child.
type Features struct {
	// LandlockABI is the kernel's Landlock ABI version; 0 without Landlock.
	// 1 confines files, 4 adds TCP, 6 signals and abstract sockets.
	LandlockABI int `json:"landlockABI"`
	// UserNS: a child can get user, mount, PID, IPC and UTS namespaces.
	UserNS bool `json:"userNS"`
	// NetNS: it can get a network namespace as well.
	NetNS bool `json:"netNS"`
	// ProcMount: inside them it can mount a /proc of its own and hide /run.
	ProcMount bool `json:"procMount"`
	// Processes names what bounds a call's process count: "cgroup v2 pids",
	// "cgroup v1 pids", "RLIMIT_NPROC in the user namespace" or "" (none).
	Processes string `json:"processes"`
	// CgroupLayout is the host's cgroup layout: unified, hybrid or legacy.
	CgroupLayout string `json:"cgroupLayout"`
	// Root: the toolrunner runs as uid 0 (RLIMIT_NPROC does not bind root).
	Root bool `json:"root"`
	// Problems says why a feature is missing, by feature.
	Problems map[string]string `json:"problems,omitempty"`
}

func (f Features) String() string {
	b, _ := json.Marshal(f) // plain fields
	return string(b)
}

// Missing lists, by name, what the level Required needs and the kernel
// lacks under policy p; empty when everything is there.
func (f Features) Missing(p Policy) []string {
	var miss []string
	add := func(ok bool, name string) {
		if !ok {
			if why := f.Problems[name]; why != "" {
				name += " (" + why + ")"
			}
			miss = append(miss, name)
		}
	}
	add(f.LandlockABI >= 1, "landlock")
	add(f.LandlockABI >= 4, "landlock tcp (ABI 4)")
	add(f.UserNS, "user namespaces")
	add(f.ProcMount, "mount namespace with a private /proc")
	if len(p.AllowPorts) == 0 {
		add(f.NetNS, "network namespace")
	}
	add(f.Processes != "", "process limit")
	return miss
}

// namespaces are the clone flags of a confined child, without the network
// namespace.
const namespaces = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS

// Probe reports what this machine offers by starting the sandbox child
// (this binary) with every namespace and asking it what it could do. It
// needs no privileges beyond the toolrunner's own.
func Probe() Features {
	f := Features{Root: os.Geteuid() == 0, CgroupLayout: cgroupLayout(), Problems: map[string]string{}}
	report, err := probeChild(namespaces | syscall.CLONE_NEWNET)
	if err == nil {
		f.UserNS, f.NetNS = true, true
	} else {
		f.Problems["network namespace"] = err.Error()
		report, err = probeChild(namespaces)
		if err == nil {
			f.UserNS = true
		} else {
			f.Problems["user namespaces"] = err.Error()
			report, err = probeChild(0)
		}
	}
	if err == nil {
		f.LandlockABI, f.ProcMount = report.LandlockABI, report.ProcMount
	}
	if f.LandlockABI == 0 {
		f.Problems["landlock"] = "not enabled in this kernel (CONFIG_SECURITY_LANDLOCK, lsm=landlock)"
	} else if f.LandlockABI < 4 {
		f.Problems["landlock tcp (ABI 4)"] = fmt.Sprintf("the kernel has ABI %d", f.LandlockABI)
	}
	if f.UserNS && !f.ProcMount {
		f.Problems["mount namespace with a private /proc"] = "mounting proc in the child's namespaces failed"
	}
	if f.Root {
		if cg, err := openCgroups(); err == nil {
			f.Processes = "cgroup " + cg.version + " pids"
			cg.close()
		} else {
			f.Problems["process limit"] = "running as root, where RLIMIT_NPROC does not bind, and no writable pids cgroup: " + err.Error()
		}
	} else if f.UserNS {
		f.Processes = "RLIMIT_NPROC in the user namespace"
	} else {
		f.Problems["process limit"] = "no user namespace to bound RLIMIT_NPROC per call"
	}
	return f
}

// probeChild starts the child in probe mode with flags and returns its
// report.
func probeChild(flags uintptr) (child.ProbeReport, error) {
	req := child.Request{Mode: child.ModeProbe, Workspace: "/", Confine: child.Confine{MountProc: flags&syscall.CLONE_NEWNS != 0, HideRun: true}}
	cmd, err := childCommand(req, flags)
	if err != nil {
		return child.ProbeReport{}, err
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return child.ProbeReport{}, fmt.Errorf("start a child with namespaces %s: %w %s", flagNames(flags), err, strings.TrimSpace(errb.String()))
	}
	var resp child.Response
	var r child.ProbeReport
	if err := json.Unmarshal(out.Bytes(), &resp); err != nil {
		return r, fmt.Errorf("probe child: %w", err)
	}
	if err := json.Unmarshal(resp.Probe, &r); err != nil {
		return r, fmt.Errorf("probe child: %w", err)
	}
	return r, nil
}

func flagNames(flags uintptr) string {
	var names []string
	for _, n := range []struct {
		f    uintptr
		name string
	}{{syscall.CLONE_NEWUSER, "user"}, {syscall.CLONE_NEWNS, "mount"}, {syscall.CLONE_NEWPID, "pid"},
		{syscall.CLONE_NEWNET, "net"}, {syscall.CLONE_NEWIPC, "ipc"}, {syscall.CLONE_NEWUTS, "uts"}} {
		if flags&n.f != 0 {
			names = append(names, n.name)
		}
	}
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ",")
}

// childCommand returns the unstarted sandbox child for req in namespaces
// flags: this binary again, argv[0] child.Arg0, an empty environment, the
// request on its stdin, killed if the toolrunner dies.
func childCommand(req child.Request, flags uintptr) (*exec.Cmd, error) {
	data, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = []string{child.Arg0}
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.Stdin = bytes.NewReader(data)
	cmd.SysProcAttr = childAttr(flags)
	return cmd, nil
}

// childAttr is a sandbox child's start: namespaces flags, killed if the
// toolrunner dies.
func childAttr(flags uintptr) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Cloneflags: flags, Pdeathsig: syscall.SIGKILL}
	if flags&syscall.CLONE_NEWUSER != 0 {
		// Root maps to root, so the call keeps root's access to root-owned
		// workspace files (Landlock bounds what that reaches; a pids cgroup
		// bounds its processes). Anyone else maps to itself, and
		// RLIMIT_NPROC binds in the new namespace.
		uid, gid := os.Geteuid(), os.Getegid()
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}}
		attr.GidMappingsEnableSetgroups = false
	}
	return attr
}
