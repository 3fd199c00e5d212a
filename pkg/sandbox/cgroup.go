package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// cgroups gives each call a pids cgroup of its own under base, where
// pids.max bounds the call's tasks. It works as root with the pids
// controller delegated (cgroup v2) or mounted writable (v1); a pod with a
// read-only /sys/fs/cgroup has neither.
type cgroups struct {
	base    string // a directory the toolrunner owns
	version string // "v2" or "v1"
	next    atomic.Uint64
}

// cgroupLayout names the host's layout: unified, hybrid or legacy.
func cgroupLayout() string {
	var st syscall.Statfs_t
	if err := syscall.Statfs("/sys/fs/cgroup", &st); err == nil && st.Type == 0x63677270 { // CGROUP2_SUPER_MAGIC
		return "unified"
	}
	if fi, err := os.Stat("/sys/fs/cgroup/unified"); err == nil && fi.IsDir() {
		return "hybrid"
	}
	return "legacy"
}

// openCgroups finds a pids hierarchy this process may create cgroups in and
// makes base there; it reports why not otherwise.
func openCgroups() (*cgroups, error) {
	own, err := ownCgroups()
	if err != nil {
		return nil, err
	}
	var tried []string
	mount2 := "/sys/fs/cgroup"
	if cgroupLayout() != "unified" {
		mount2 = "/sys/fs/cgroup/unified"
	}
	if p, ok := own[""]; ok {
		dir := filepath.Join(mount2, p)
		ctl, _ := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
		if strings.Contains(" "+string(ctl)+" ", " pids ") || strings.Contains(string(ctl), "pids") {
			if c, err := makeBase(dir, "v2"); err == nil {
				return c, nil
			} else {
				tried = append(tried, err.Error())
			}
		} else {
			tried = append(tried, "cgroup v2: pids is not delegated to "+dir)
		}
	}
	if p, ok := own["pids"]; ok {
		if c, err := makeBase(filepath.Join("/sys/fs/cgroup/pids", p), "v1"); err == nil {
			return c, nil
		} else {
			tried = append(tried, err.Error())
		}
	} else {
		tried = append(tried, "cgroup v1: no pids hierarchy")
	}
	return nil, errors.New(strings.Join(tried, "; "))
}

func makeBase(dir, version string) (*cgroups, error) {
	sweep(dir)
	base := filepath.Join(dir, fmt.Sprintf("cairn-sandbox-%d", os.Getpid()))
	if err := os.Mkdir(base, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("cgroup %s: %w", version, err)
	}
	if _, err := os.Stat(filepath.Join(base, "pids.max")); err != nil {
		_ = os.Remove(base) // nothing in it
		return nil, fmt.Errorf("cgroup %s: %s has no pids.max", version, base)
	}
	if version == "v2" {
		// Children of base need the controller enabled in base.
		if err := os.WriteFile(filepath.Join(base, "cgroup.subtree_control"), []byte("+pids"), 0); err != nil {
			_ = os.Remove(base)
			return nil, fmt.Errorf("cgroup v2: enable pids in %s: %w", base, err)
		}
	}
	return &cgroups{base: base, version: version}, nil
}

// ownCgroups reads /proc/self/cgroup: controller (or "" for v2) to path.
func ownCgroups() (map[string]string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read-only
	own := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, ctl := range strings.Split(parts[1], ",") {
			own[ctl] = parts[2]
		}
	}
	return own, sc.Err()
}

// call makes the cgroup of one call with pids.max = max and returns its
// cgroup.procs file and a function removing it once the call has ended.
func (c *cgroups) call(max uint64) (string, func(), error) {
	dir := filepath.Join(c.base, strconv.FormatUint(c.next.Add(1), 10))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", nil, fmt.Errorf("cgroup: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.FormatUint(max, 10)), 0); err != nil {
		_ = os.Remove(dir)
		return "", nil, fmt.Errorf("cgroup pids.max: %w", err)
	}
	return filepath.Join(dir, "cgroup.procs"), func() { removeCgroup(dir) }, nil
}

// removeCgroup removes dir once its last task is gone. When the PID
// namespace's first process exits the kernel kills the others, which takes
// a moment; a cgroup still busy after a second is left for close.
func removeCgroup(dir string) {
	for i := 0; i < 100; i++ {
		if err := os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// close removes what is left under base.
func (c *cgroups) close() {
	entries, _ := os.ReadDir(c.base)
	for _, e := range entries {
		if e.IsDir() {
			removeCgroup(filepath.Join(c.base, e.Name()))
		}
	}
	_ = os.Remove(c.base)
}

// sweep removes the empty base cgroups of toolrunners that are gone (killed
// before they could remove their own).
func sweep(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		pid, ok := strings.CutPrefix(e.Name(), "cairn-sandbox-")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil || !e.IsDir() || syscall.Kill(n, 0) != syscall.ESRCH {
			continue
		}
		base := filepath.Join(dir, e.Name())
		calls, _ := os.ReadDir(base)
		for _, c := range calls {
			if c.IsDir() {
				_ = os.Remove(filepath.Join(base, c.Name())) // busy: left for the next sweep
			}
		}
		_ = os.Remove(base)
	}
}
