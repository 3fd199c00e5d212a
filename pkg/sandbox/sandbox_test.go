package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/sandbox"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// The test binary is the sandbox child too: the package's init takes over
// when it is re-executed as one.
func TestMain(m *testing.M) { kittest.Main(m, nil) }

// TestProbeOffersEveryLayer reports what this kernel offers and fails,
// naming the layer, where one that --sandbox required needs is missing.
func TestProbeOffersEveryLayer(t *testing.T) {
	f := sandbox.Probe()
	t.Logf("probe: %s", f)
	if miss := f.Missing(sandbox.Policy{}); len(miss) > 0 {
		t.Fatalf("this machine cannot confine tool calls at level required: missing %s", strings.Join(miss, ", "))
	}
	sb, err := sandbox.New(sandbox.Required, sandbox.Policy{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closeSandbox(t, sb)
	if sb.Level() != sandbox.Required || len(sb.Missing()) != 0 {
		t.Errorf("level %s, missing %v; want required with nothing missing", sb.Level(), sb.Missing())
	}
}

func TestMissingNamesEachLayer(t *testing.T) {
	miss := strings.Join(sandbox.Features{}.Missing(sandbox.Policy{}), ", ")
	for _, want := range []string{"landlock", "landlock tcp", "user namespaces", "private /proc", "network namespace", "process limit"} {
		if !strings.Contains(miss, want) {
			t.Errorf("Missing() = %q, want it to name %q", miss, want)
		}
	}
	withPorts := sandbox.Features{}.Missing(sandbox.Policy{AllowPorts: []uint16{443}})
	if slices.Contains(withPorts, "network namespace") {
		t.Errorf("with ports allowed no network namespace is needed: %v", withPorts)
	}
}

func TestParseLevel(t *testing.T) {
	for _, l := range sandbox.Levels {
		if got, err := sandbox.ParseLevel(l.String()); err != nil || got != l {
			t.Errorf("ParseLevel(%q) = %v, %v", l, got, err)
		}
	}
	if _, err := sandbox.ParseLevel("none"); err == nil || !strings.Contains(err.Error(), "required, best-effort, off") {
		t.Errorf("ParseLevel(none) = %v, want an error listing the levels", err)
	}
}

func TestPolicyValidateNamesTheField(t *testing.T) {
	for field, p := range map[string]sandbox.Policy{
		"allowPorts": {AllowPorts: []uint16{0}}, "cpuTime": {CPUTime: time.Millisecond}, "memory": {Memory: 1},
		"fileSize": {FileSize: 1}, "openFiles": {OpenFiles: 1}, "processes": {Processes: 1}, "readOnly": {ReadOnly: []string{"rel"}},
	} {
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("Validate(%+v) = %v, want an error naming %s", p, err, field)
		}
	}
}

// TestOffRunsUnconfined: --sandbox off is the toolrunner's own permissions.
func TestOffRunsUnconfined(t *testing.T) {
	sb, err := sandbox.New(sandbox.Off, sandbox.Policy{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closeSandbox(t, sb)
	bash := tools(t, sb, t.TempDir())["bash"]
	if r := run(t, bash, `{"command":"head -c 5 /etc/passwd"}`); r.IsError {
		t.Errorf("off: reading /etc/passwd failed: %s", textOf(r))
	}
}

// TestAllowPortsOpensOnlyThem: with ports allowed the call shares the host
// network and Landlock lets it connect to those ports only.
func TestAllowPortsOpensOnlyThem(t *testing.T) {
	open, closed := listen(t), listen(t)
	sb, err := sandbox.New(sandbox.Required, sandbox.Policy{AllowPorts: []uint16{port(open)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closeSandbox(t, sb)
	bash := tools(t, sb, t.TempDir())["bash"]
	if r := run(t, bash, fmt.Sprintf(`{"command":"echo hi > /dev/tcp/127.0.0.1/%d && echo connected"}`, port(open))); r.IsError {
		t.Errorf("connect to the allowed port: %s", textOf(r))
	}
	r := run(t, bash, fmt.Sprintf(`{"command":"echo hi > /dev/tcp/127.0.0.1/%d"}`, port(closed)))
	if !r.IsError || !strings.Contains(textOf(r), "Permission denied") {
		t.Errorf("connect to another port: %s, want Permission denied", textOf(r))
	}
}

// TestEnvironmentIsClean: nothing of the toolrunner's environment reaches a
// command.
func TestEnvironmentIsClean(t *testing.T) {
	t.Setenv("CAIRN_NATS_CREDS", "secret-creds")
	t.Setenv("ANTHROPIC_API_KEY", "sk-secret")
	sb, err := sandbox.New(sandbox.Required, sandbox.Policy{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closeSandbox(t, sb)
	dir := t.TempDir()
	out := textOf(run(t, tools(t, sb, dir)["bash"], `{"command":"env"}`))
	for _, bad := range []string{"secret", "CAIRN_", "API_KEY"} {
		if strings.Contains(out, bad) {
			t.Errorf("env shows %q:\n%s", bad, out)
		}
	}
	real, _ := filepath.EvalSymlinks(dir)
	if !strings.Contains(out, "HOME="+real) || !strings.Contains(out, "PATH=/usr/local/bin:") {
		t.Errorf("env lacks HOME=workspace or the system PATH:\n%s", out)
	}
}

// TestWarmChildrenServeAndEnd: bash calls run in children started ahead of
// them; children killed while they wait are replaced, not fatal to a call;
// Close ends the ones waiting.
func TestWarmChildrenServeAndEnd(t *testing.T) {
	sb, err := sandbox.New(sandbox.Required, sandbox.Policy{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	full := func() bool { return sandbox.WarmChildren(sb) == sandbox.PoolSize }
	kittest.Eventually(t, 30*time.Second, "the pool full", full)
	bash := tools(t, sb, t.TempDir())["bash"]
	for i := range 5 {
		if r := run(t, bash, fmt.Sprintf(`{"command":"echo call %d; cat /etc/passwd"}`, i)); !r.IsError ||
			!strings.Contains(textOf(r), fmt.Sprintf("call %d\n", i)) || !strings.Contains(textOf(r), "Permission denied") {
			t.Errorf("call %d: %q, want its output and a confined cat", i, textOf(r))
		}
	}
	kittest.Eventually(t, 30*time.Second, "the pool refilled", full)
	for _, pid := range sandbox.WarmPIDs(sb, false) {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		// Dead, its socket closed, not merely signalled: a zombie whose
		// other threads are gone.
		kittest.Eventually(t, 30*time.Second, "the killed child dead", func() bool {
			stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			_, rest, _ := strings.Cut(string(stat), ") ")
			tasks, terr := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
			return err == nil && strings.HasPrefix(rest, "Z") && terr == nil && len(tasks) == 1
		})
	}
	if r := run(t, bash, `{"command":"echo after the kill"}`); r.IsError || !strings.Contains(textOf(r), "after the kill") {
		t.Errorf("with the waiting children killed: %q, want the call served", textOf(r))
	}
	kittest.Eventually(t, 30*time.Second, "the pool refilled", full)
	pids := sandbox.WarmPIDs(sb, false)
	closeSandbox(t, sb)
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("child %d outlives Close: kill(0) = %v", pid, err)
		}
	}
}

// TestWarmToolChildrenServeAndEnd: file tool calls run in children started
// ahead of them too, confined to the call's workspace once they have it;
// children killed while they wait are replaced; Close ends the ones waiting.
func TestWarmToolChildrenServeAndEnd(t *testing.T) {
	sb, err := sandbox.New(sandbox.Required, sandbox.Policy{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	full := func() bool { return sandbox.WarmToolChildren(sb) == sandbox.PoolSize }
	kittest.Eventually(t, 30*time.Second, "the pool full", full)
	dir, other := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "secret.txt"), []byte("other session"), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := tools(t, sb, dir)
	for i := range 5 {
		if r := run(t, ts["write"], fmt.Sprintf(`{"path":"f%d.txt","content":"call %d"}`, i, i)); r.IsError {
			t.Fatalf("write %d: %s", i, textOf(r))
		}
		if r := run(t, ts["read"], fmt.Sprintf(`{"path":"f%d.txt"}`, i)); r.IsError || !strings.Contains(textOf(r), fmt.Sprintf("call %d", i)) {
			t.Errorf("read %d: %q, want what was written", i, textOf(r))
		}
	}
	// A symlink out of the workspace is refused (by the tools' own path
	// checks first; Landlock, applied once the child has its request,
	// underneath).
	if err := os.Symlink(other, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if r := run(t, ts["read"], `{"path":"out/secret.txt"}`); !r.IsError || strings.Contains(textOf(r), "other session") {
		t.Errorf("read through a symlink out of the workspace: %q, want an error", textOf(r))
	}
	kittest.Eventually(t, 30*time.Second, "the pool refilled", full)
	for _, pid := range sandbox.WarmPIDs(sb, true) {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		kittest.Eventually(t, 30*time.Second, "the killed child dead", func() bool {
			stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			_, rest, _ := strings.Cut(string(stat), ") ")
			tasks, terr := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
			return err == nil && strings.HasPrefix(rest, "Z") && terr == nil && len(tasks) == 1
		})
	}
	if r := run(t, ts["read"], `{"path":"f0.txt"}`); r.IsError || !strings.Contains(textOf(r), "call 0") {
		t.Errorf("with the waiting children killed: %q, want the call served", textOf(r))
	}
	kittest.Eventually(t, 30*time.Second, "the pool refilled", full)
	pids := sandbox.WarmPIDs(sb, true)
	closeSandbox(t, sb)
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("child %d outlives Close: kill(0) = %v", pid, err)
		}
	}
}

// BenchmarkCall measures one tool call with and without confinement: the
// child's start, namespaces, Landlock and limits are the difference. Calls
// run back to back, so a bash call's child started ahead (the pool) is
// being replaced while the next call runs (so are a file tool's); "idle"
// lets the pools refill between calls (untimed), as the time a model takes
// between calls does. cpu-ms/op is the CPU time per call of the benchmark
// and its children (see cpuTime).
func BenchmarkCall(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("hello\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, level := range []sandbox.Level{sandbox.Off, sandbox.Required} {
		sb, err := sandbox.New(level, sandbox.Policy{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		ts := tools(b, sb, dir)
		for _, c := range []struct {
			name, tool, args string
			idle             bool
		}{
			{"bash-true", "bash", `{"command":"true"}`, false},
			{"bash-true-idle", "bash", `{"command":"true"}`, true},
			{"read", "read", `{"path":"f.txt"}`, false},
			{"read-idle", "read", `{"path":"f.txt"}`, true},
		} {
			if c.idle && level == sandbox.Off {
				continue
			}
			b.Run(c.name+"/"+level.String(), func(b *testing.B) {
				var d []time.Duration
				cpu0 := cpuTime(b)
				for b.Loop() {
					if c.idle {
						b.StopTimer()
						kittest.Eventually(b, 30*time.Second, "the pools full", func() bool {
							return sandbox.WarmChildren(sb) == sandbox.PoolSize && sandbox.WarmToolChildren(sb) == sandbox.PoolSize
						})
						b.StartTimer()
					}
					start := time.Now()
					if r := run(b, ts[c.tool], c.args); r.IsError {
						b.Fatal(textOf(r))
					}
					d = append(d, time.Since(start))
				}
				cpu := cpuTime(b) - cpu0
				sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
				b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(d[len(d)*99/100].Microseconds())/1000, "p99-ms")
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(len(d)), "cpu-ms/op")
			})
		}
		closeSandbox(b, sb)
	}
}

// cpuTime is the CPU time, user and system, of this process and of the
// children it has reaped: per call that is one child's whole life (its
// start included, whether ahead of the call or on its path), the figure the
// machine's load does not change much, unlike the latencies.
func cpuTime(b *testing.B) time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err != nil {
			b.Fatal(err)
		}
		total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return total
}

func tools(t testing.TB, sb *sandbox.Sandbox, dir string) map[string]tool.Tool {
	t.Helper()
	set, ts, err := sb.Tools(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set.Close() })
	m := map[string]tool.Tool{}
	for _, x := range ts {
		m[x.Spec().Name] = x
	}
	return m
}

func run(t testing.TB, x tool.Tool, args string) tool.Result {
	t.Helper()
	r, err := x.Execute(context.Background(), tool.Call{ID: "c", Name: x.Spec().Name, Arguments: json.RawMessage(args)}, nil)
	if err != nil {
		return tool.Error(err.Error())
	}
	return r
}

func textOf(r tool.Result) string {
	var b strings.Builder
	for _, bl := range r.Content {
		b.WriteString(bl.Text)
	}
	return b.String()
}

func closeSandbox(t testing.TB, sb *sandbox.Sandbox) {
	if err := sb.Close(); err != nil {
		t.Error(err)
	}
}

func listen(t *testing.T) net.Listener {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln
}

func port(ln net.Listener) uint16 { return uint16(ln.Addr().(*net.TCPAddr).Port) }
