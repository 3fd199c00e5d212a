package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
)

func bashDetails(t *testing.T, r tool.Result) BashDetails {
	t.Helper()
	var d BashDetails
	decodeDetails(t, r, &d)
	return d
}

func TestBashOutputAndExitCode(t *testing.T) {
	s, ws := newSet(t)
	r := mustCall(t, s, "bash", map[string]any{"command": "echo a; echo b >&2; echo c; pwd"})
	if got := text(r); got != "a\nb\nc\n"+ws+"\n" {
		t.Fatalf("output %q", got)
	}
	if d := bashDetails(t, r); d.ExitCode == nil || *d.ExitCode != 0 {
		t.Fatalf("details %+v", d)
	}
	r, err := call(t, s, "bash", map[string]any{"command": "echo oops; exit 3"})
	if err != nil || !r.IsError || text(r) != "oops\n\nCommand exited with code 3" {
		t.Fatalf("exit 3: %v %q", err, text(r))
	}
	if d := bashDetails(t, r); d.ExitCode == nil || *d.ExitCode != 3 {
		t.Fatalf("details %+v", d)
	}
	r = mustCall(t, s, "bash", map[string]any{"command": "true"})
	if text(r) != "(no output)" {
		t.Fatalf("no output: %q", text(r))
	}
	r, _ = call(t, s, "bash", map[string]any{"command": "kill -9 $$"})
	if d := bashDetails(t, r); !r.IsError || d.Signal != "killed" || d.ExitCode != nil {
		t.Fatalf("killed: %q %+v", text(r), d)
	}
}

func TestBashEnvironmentIsMinimal(t *testing.T) {
	t.Setenv("CAIRN_TEST_SECRET", "hunter2")
	s, _ := newSet(t)
	r := mustCall(t, s, "bash", map[string]any{"command": `echo "[$CAIRN_TEST_SECRET]"; echo "$TERM"`})
	if got := text(r); got != "[]\ndumb\n" {
		t.Fatalf("env leaked or wrong: %q", got)
	}
	s2, _ := newSet(t, WithBashEnv([]string{"PATH=/usr/bin:/bin", "GREETING=hi"}))
	r = mustCall(t, s2, "bash", map[string]any{"command": `echo "$GREETING"`})
	if got := text(r); got != "hi\n" {
		t.Fatalf("WithBashEnv: %q", got)
	}
}

func TestBashArgErrors(t *testing.T) {
	s, _ := newSet(t, WithBashTimeout(time.Second, 10*time.Second))
	cases := map[string]string{
		`{}`:                               "command: is required",
		`{"command":""}`:                   "command: must not be empty",
		`{"command":"true","timeout":0}`:   "timeout: must be more than 0 and at most 10 seconds",
		`{"command":"true","timeout":11}`:  "timeout: must be more than 0 and at most 10 seconds",
		`{"command":"true","timeout":"5"}`: "timeout: must be a number",
		`{"command":"true","cwd":"/"}`:     "cwd: unknown argument of bash",
	}
	for args, want := range cases {
		_, err := call(t, s, "bash", args)
		if !errors.Is(err, events.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("bash %s: %v, want %q", args, err, want)
		}
	}
}

// processGone reports whether pid has exited: it no longer exists, or it is
// a zombie waiting for a parent (init here) to reap it.
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// Fields after the command name in parentheses; the first is the state.
	rest := stat[strings.LastIndexByte(string(stat), ')')+1:]
	state := strings.Fields(string(rest))[0]
	return state == "Z" || state == "X"
}

// waitGone polls until every pid has exited, failing after a deadline.
func waitGone(t *testing.T, pids ...int) {
	t.Helper()
	kittest.Eventually(t, 10*time.Second, "every process gone", func() error {
		for _, pid := range pids {
			if !processGone(pid) {
				return fmt.Errorf("process %d is still running", pid)
			}
		}
		return nil
	})
}

func readPids(t *testing.T, ws string, names ...string) []int {
	t.Helper()
	var pids []int
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(ws, n))
		if err != nil {
			t.Fatalf("pid file %s: %v", n, err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 1 {
			t.Fatalf("pid file %s: %q", n, b)
		}
		pids = append(pids, pid)
	}
	return pids
}

// spawnTree starts a background child and a child with a grandchild, writes
// their pids and then blocks; the pid files exist before "ready" is printed.
const spawnTree = `sleep 1000 & echo $! > child.pid
bash -c 'sleep 1000 & echo $! > grandchild.pid; wait' & echo $! > middle.pid
while [ ! -s grandchild.pid ]; do sleep 0.01; done
echo ready
wait`

func TestBashTimeoutKillsProcessGroup(t *testing.T) {
	s, ws := newSet(t)
	r, err := call(t, s, "bash", map[string]any{"command": spawnTree, "timeout": 2})
	if err != nil {
		t.Fatal(err)
	}
	d := bashDetails(t, r)
	if !r.IsError || !d.TimedOut || d.ExitCode != nil {
		t.Fatalf("result %q %+v", text(r), d)
	}
	wantContains(t, text(r), "ready\n", "Command timed out after 2 seconds; it and every process it started were killed")
	waitGone(t, readPids(t, ws, "child.pid", "middle.pid", "grandchild.pid")...)
}

func TestBashCancelKillsProcessGroup(t *testing.T) {
	s, ws := newSet(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tl, _ := s.Get("bash")
	var once sync.Once
	r, err := tl.Execute(ctx, tool.Call{Arguments: []byte(`{"command":` + strconv.Quote(spawnTree) + `,"timeout":60}`)}, func(u tool.Result) {
		if strings.Contains(text(u), "ready") {
			once.Do(cancel)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := bashDetails(t, r); !r.IsError || !d.Aborted {
		t.Fatalf("result %q %+v", text(r), d)
	}
	wantContains(t, text(r), "ready\n", "Command aborted")
	waitGone(t, readPids(t, ws, "child.pid", "middle.pid", "grandchild.pid")...)
}

// A command that leaves a background process returns when the shell exits,
// and the process does not outlive the call.
func TestBashReapsBackgroundOnExit(t *testing.T) {
	s, ws := newSet(t)
	r := mustCall(t, s, "bash", map[string]any{"command": "sleep 1000 & echo $! > child.pid; echo done"})
	if text(r) != "done\n" {
		t.Fatalf("output %q", text(r))
	}
	waitGone(t, readPids(t, ws, "child.pid")...)
}

func TestBashStreamsUpdates(t *testing.T) {
	s, ws := newSet(t, WithUpdateInterval(time.Millisecond))
	cmd := `echo first; while [ ! -e go ]; do sleep 0.01; done; echo second`
	var mu sync.Mutex
	var updates []string
	r, err := callUpdates(t, s, "bash", map[string]any{"command": cmd, "timeout": 60}, func(u tool.Result) {
		mu.Lock()
		updates = append(updates, text(u))
		mu.Unlock()
		if strings.Contains(text(u), "first") {
			// Only now may the command finish: the update came while it ran.
			if err := os.WriteFile(filepath.Join(ws, "go"), nil, 0o644); err != nil {
				t.Error(err)
			}
		}
	})
	if err != nil || r.IsError {
		t.Fatalf("%v %q", err, text(r))
	}
	if text(r) != "first\nsecond\n" {
		t.Fatalf("final %q", text(r))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(updates) == 0 || updates[0] != "first\n" {
		t.Fatalf("updates %q", updates)
	}
	for i := 1; i < len(updates); i++ {
		if !strings.HasPrefix(updates[i], updates[i-1]) {
			t.Fatalf("updates do not grow: %q", updates)
		}
	}
}

func TestBashTruncatesTail(t *testing.T) {
	s, _ := newSet(t)
	r := mustCall(t, s, "bash", map[string]any{"command": "seq 1 5000"})
	body, note, _ := strings.Cut(text(r), "\n\n")
	lines := strings.Split(body, "\n")
	if len(lines) != DefaultMaxLines || lines[0] != "3001" || lines[len(lines)-1] != "5000" {
		t.Fatalf("kept %d lines, %q..%q", len(lines), lines[0], lines[len(lines)-1])
	}
	// The bytes of the 3000 lines cut:
	cut := 0
	for i := 1; i <= 3000; i++ {
		cut += len(strconv.Itoa(i)) + 1
	}
	want := fmt.Sprintf("[Showing lines 3001-5000 of 5000; 3000 earlier lines (%s) cut. Redirect output to a file and use read or grep to see all of it.]", formatSize(int64(cut)))
	if note != want {
		t.Fatalf("note %q\nwant %q", note, want)
	}
	d := bashDetails(t, r)
	if d.Truncation == nil || d.Truncation.By != "lines" || d.Truncation.TotalLines != 5000 {
		t.Fatalf("details %+v", d.Truncation)
	}
}

func TestBashTruncatesBytesAndPartialLine(t *testing.T) {
	s, _ := newSet(t, WithOutputLimit(1000, 100))
	r := mustCall(t, s, "bash", map[string]any{"command": "seq 1 100"})
	body, note, _ := strings.Cut(text(r), "\n\n")
	if len(body) > 100 || !strings.HasSuffix(body, "\n100") || strings.HasPrefix(body, "\n") {
		t.Fatalf("body %q", body)
	}
	first, _ := strconv.Atoi(body[:strings.IndexByte(body, '\n')])
	wantContains(t, note, fmt.Sprintf("[Showing lines %d-100 of 100; %d earlier lines", first, first-1))

	r = mustCall(t, s, "bash", map[string]any{"command": "head -c 500 /dev/zero | tr '\\0' x"})
	body, note, _ = strings.Cut(text(r), "\n\n")
	if body != strings.Repeat("x", 100) {
		t.Fatalf("partial line body %q", body)
	}
	wantContains(t, note, "[Showing the last 100B of line 1; 400B of earlier output cut.")
}

func TestBashInvalidUTF8(t *testing.T) {
	s, _ := newSet(t)
	r := mustCall(t, s, "bash", map[string]any{"command": `printf 'a\377b\n'`})
	if text(r) != "a\uFFFDb\n" {
		t.Fatalf("got %q", text(r))
	}
}
