package sandbox

import (
	"fmt"
	"time"
)

// Policy is what a confined call may use. The zero value of each field
// means the default in its comment.
type Policy struct {
	// AllowPorts are the TCP ports a call may connect to. Empty (the
	// default) means no network: the call gets a network namespace of its
	// own with nothing in it. With ports listed the call shares the host's
	// network and Landlock (ABI 4 or later) refuses TCP connections to any
	// other port and every bind. Hosts are not filtered: a listed port is
	// open on every host, and UDP is not restricted (Landlock ABI < 10).
	AllowPorts []uint16
	// AllowHosts are the hosts (and ports) a call may reach through the
	// sandbox's proxy (see [ProxyPort]); the call keeps a network namespace
	// of its own with no route out, and only the proxy, which runs outside
	// it, connects on its behalf. A name must resolve to public addresses;
	// a loopback, private or link-local target needs its IP literal listed.
	// AllowHosts and AllowPorts exclude each other.
	AllowHosts []AllowedHost
	// ReadOnly are extra directories or files a call may read and execute
	// (besides /usr, /bin, /lib*, /sbin, /opt and the few /etc files bash,
	// python3 and git need).
	ReadOnly []string
	// CPUTime is RLIMIT_CPU per process; default 10m.
	CPUTime time.Duration
	// Memory is RLIMIT_AS (address space) per process of bash calls, in
	// bytes; default 2 GiB.
	Memory uint64
	// FileSize is RLIMIT_FSIZE, the largest file a call may write, in bytes;
	// default 1 GiB.
	FileSize uint64
	// OpenFiles is RLIMIT_NOFILE; default 1024.
	OpenFiles uint64
	// Processes bounds the tasks (processes and threads) of one call (cgroup
	// pids.max, or RLIMIT_NPROC in the call's user namespace when the
	// toolrunner does not run as root); default 256.
	Processes uint64
}

func (p Policy) withDefaults() Policy {
	if p.CPUTime == 0 {
		p.CPUTime = 10 * time.Minute
	}
	if p.Memory == 0 {
		p.Memory = 2 << 30
	}
	if p.FileSize == 0 {
		p.FileSize = 1 << 30
	}
	if p.OpenFiles == 0 {
		p.OpenFiles = 1024
	}
	if p.Processes == 0 {
		p.Processes = 256
	}
	return p
}

// Validate reports the first field out of range.
func (p Policy) Validate() error {
	for _, port := range p.AllowPorts {
		if port == 0 {
			return fmt.Errorf("sandbox policy: allowPorts: port 0 is not a port")
		}
	}
	if len(p.AllowPorts) > 0 && len(p.AllowHosts) > 0 {
		return fmt.Errorf("sandbox policy: allowPorts and allowHosts exclude each other (allowPorts shares the host network); give ports in allowHosts entries as host:port")
	}
	for _, h := range p.AllowHosts {
		if got, err := parseAllowHost(h.String()); err != nil || got != h {
			return fmt.Errorf("sandbox policy: allowHosts: %q is not a normalised host[:port] (use ParseAllowHosts)", h.String())
		}
	}
	switch {
	case p.CPUTime < 0 || (p.CPUTime > 0 && p.CPUTime < time.Second):
		return fmt.Errorf("sandbox policy: cpuTime must be at least 1s, got %v", p.CPUTime)
	case p.Memory > 0 && p.Memory < 64<<20:
		return fmt.Errorf("sandbox policy: memory must be at least 64 MiB, got %d bytes", p.Memory)
	case p.FileSize > 0 && p.FileSize < 4096:
		return fmt.Errorf("sandbox policy: fileSize must be at least 4096 bytes, got %d", p.FileSize)
	case p.OpenFiles > 0 && p.OpenFiles < 16:
		return fmt.Errorf("sandbox policy: openFiles must be at least 16, got %d", p.OpenFiles)
	case p.Processes > 0 && p.Processes < 8:
		return fmt.Errorf("sandbox policy: processes must be at least 8, got %d", p.Processes)
	}
	for _, d := range p.ReadOnly {
		if d == "" || d[0] != '/' {
			return fmt.Errorf("sandbox policy: readOnly %q is not an absolute path", d)
		}
	}
	return nil
}
