package child

import (
	"fmt"
	"os"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// DefaultPath is the PATH of every confined command: system directories
// only, all of them readable under the Landlock rules below.
const DefaultPath = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"

// systemDirs may be read and executed by every confined call.
var systemDirs = []string{"/usr", "/bin", "/lib", "/lib64", "/lib32", "/libx32", "/sbin", "/opt"}

// etcFiles are the files of /etc a call may read: what the dynamic loader,
// bash, python3 and git look for. /etc/passwd, /etc/shadow, /etc/hosts and
// everything else in /etc stay unreadable.
var etcFiles = []string{
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime", "/etc/timezone",
	"/etc/nsswitch.conf", "/etc/gitconfig", "/etc/inputrc", "/etc/mime.types",
}

// etcDirs are the directories of /etc a call may read: the alternatives
// symlinks (/usr/bin/python3 may point through them), ld.so.conf.d and
// python's own configuration.
var etcDirs = []string{"/etc/alternatives", "/etc/ld.so.conf.d", "/etc/python3", "/etc/python3.11",
	"/etc/python3.12", "/etc/python3.13"}

// netEtcFiles are added when the policy allows ports: name resolution and
// TLS roots.
var netEtcFiles = []string{"/etc/resolv.conf", "/etc/hosts", "/etc/host.conf", "/etc/gai.conf"}
var netEtcDirs = []string{"/etc/ssl", "/etc/ca-certificates", "/etc/pki"}

// devFiles may be read and written; nothing else of /dev is reachable.
var devFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/urandom", "/dev/random"}

// Apply confines the calling process as req says, in this order: join the
// call's cgroup, private mounts with a fresh /proc, resource limits,
// Landlock, then the working directory. Anything asked for that fails is an
// error: the parent asked only for what the probe found. Landlock binds
// every thread of the process (the file tools run Go code on many).
func Apply(req Request) error { return apply(req, false) }

// apply is Apply; with thread, Landlock and no_new_privs bind only the
// calling OS thread, which must be locked to its goroutine and must exec
// next: execve ends the process's other threads and the program inherits
// the calling thread's credentials, Landlock domain included. That skips
// stopping every thread of the runtime to apply them (psx), a good part of
// what the child cost bash calls.
func apply(req Request, thread bool) error {
	c := req.Confine
	if c.Cgroup != "" {
		if err := os.WriteFile(c.Cgroup, []byte("0"), 0); err != nil {
			return fmt.Errorf("join cgroup: %w", err)
		}
	}
	if c.MountProc {
		if err := mountPrivate(req); err != nil {
			return err
		}
	}
	if err := setRlimits(c.Rlimits); err != nil {
		return err
	}
	if c.Landlock {
		if err := restrict(req, thread); err != nil {
			return fmt.Errorf("landlock: %w", err)
		}
	}
	if err := os.Chdir(req.Workspace); err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	return nil
}

// mountPrivate makes the child's mounts private, mounts a /proc that shows
// only the child's PID namespace and, when the parent says the call's
// directories are not under it (Confine.HideRun), hides /run (where sockets
// such as docker.sock live, which Landlock below ABI 9 does not guard) under
// an empty read-only tmpfs.
func mountPrivate(req Request) error {
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	if err := syscall.Mount("proc", "/proc", "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount a fresh /proc: %w", err)
	}
	if fi, err := os.Stat("/run"); err == nil && fi.IsDir() && req.Confine.HideRun {
		if err := syscall.Mount("tmpfs", "/run", "tmpfs",
			syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC|syscall.MS_RDONLY, "size=4k,mode=755"); err != nil {
			return fmt.Errorf("hide /run: %w", err)
		}
	}
	return nil
}

func setRlimits(r Rlimits) error {
	set := func(name string, res int, v uint64) error {
		if v == 0 {
			return nil
		}
		if err := syscall.Setrlimit(res, &syscall.Rlimit{Cur: v, Max: v}); err != nil {
			return fmt.Errorf("set %s to %d: %w", name, v, err)
		}
		return nil
	}
	const rlimitNproc = 6 // RLIMIT_NPROC on Linux
	for _, l := range []struct {
		name string
		res  int
		v    uint64
	}{
		{"RLIMIT_CPU", syscall.RLIMIT_CPU, r.CPUSeconds},
		{"RLIMIT_FSIZE", syscall.RLIMIT_FSIZE, r.FSize},
		{"RLIMIT_NOFILE", syscall.RLIMIT_NOFILE, r.NoFile},
		{"RLIMIT_AS", syscall.RLIMIT_AS, r.AS},
		{"RLIMIT_NPROC", rlimitNproc, r.NProc},
	} {
		if err := set(l.name, l.res, l.v); err != nil {
			return err
		}
	}
	return nil
}

// restrict applies the Landlock ruleset: the workspace and the call's temp
// directory read-write, the system directories read-only, the listed /etc
// and /dev files, /proc when it is the child's own, TCP connections only to
// the allowed ports, no bind, and no signals or abstract sockets across the
// sandbox's boundary (ABI 6). With ABI above 7 the newer rights apply too
// (V11, best effort down to what the kernel has; the parent refuses a kernel
// below what the level requires before it gets here).
func restrict(req Request, thread bool) error {
	c := req.Confine
	rw := []string{req.Workspace}
	if req.Tmp != "" {
		rw = append(rw, req.Tmp)
	}
	etcF, etcD := etcFiles, etcDirs
	if len(c.Ports) > 0 {
		etcF = append(append([]string{}, etcF...), netEtcFiles...)
		etcD = append(append([]string{}, etcD...), netEtcDirs...)
	}
	rules := []landlock.Rule{
		landlock.RWDirs(rw...).WithRefer(),
		landlock.RODirs(systemDirs...).IgnoreIfMissing(),
		landlock.RODirs(etcD...).IgnoreIfMissing(),
		landlock.ROFiles(etcF...).IgnoreIfMissing(),
		landlock.RWFiles(devFiles...).WithIoctlDev().IgnoreIfMissing(),
	}
	if c.MountProc {
		rules = append(rules, landlock.RODirs("/proc"))
	}
	for _, p := range c.ReadOnly {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			rules = append(rules, landlock.ROFiles(p))
		} else {
			rules = append(rules, landlock.RODirs(p).IgnoreIfMissing())
		}
	}
	if c.TCP {
		for _, port := range c.Ports {
			rules = append(rules, landlock.ConnectTCP(port))
		}
	}
	cfg := landlock.V11.BestEffort()
	if !thread {
		return cfg.Restrict(rules...)
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil || fd < 0 { // fd < 0: nothing the kernel can restrict
		return err
	}
	defer func() { _ = syscall.Close(fd) }() // enforced or failed, the fd is done
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := llsys.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}
