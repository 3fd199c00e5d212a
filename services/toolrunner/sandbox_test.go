package toolrunner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/sandbox"
	"github.com/cairn-agents/cairn/pkg/toolbus"
	"github.com/cairn-agents/cairn/services/toolrunner"
)

// TestSandboxStopsAToolCallAttacker is the attack table of issue 18, run
// through a real toolrunner over real NATS at --sandbox required: each
// attempt ends in an error result, the runner answers the next call, and
// legit work in the workspace still runs. A machine without a layer fails
// here, naming it (sandbox.New at level required).
func TestSandboxStopsAToolCallAttacker(t *testing.T) {
	c := newCluster(t)
	t.Log("sandbox probe: ", sandbox.Probe())
	ws := filepath.Join(c.root, events.DefaultTenant, "s1") // root/<tenant>/<sid>
	other := filepath.Join(c.root, events.DefaultTenant, "s2")
	outside := t.TempDir() // stands for anything outside the workspace root
	data := t.TempDir()    // stands for the data directory (NATS store, read models)
	for _, d := range []string{ws, other, filepath.Join(data, "nats")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(outside, "secret"), "OUTSIDE-SECRET")
	write(filepath.Join(other, "secret"), "OTHER-SESSION-SECRET")
	write(filepath.Join(data, "nats", "store"), "DATA-DIR-SECRET")
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(outside, filepath.Join(ws, "out")))
	must(os.Link(filepath.Join(outside, "secret"), filepath.Join(ws, "hard")))
	must(syscall.Mknod(filepath.Join(ws, "mem"), syscall.S_IFCHR|0o644, 1<<8|1)) // /dev/mem's numbers
	ln, err := net.Listen("tcp", "127.0.0.1:0")                                  // any TCP port (the gateway's, say)
	must(err)
	defer func() { _ = ln.Close() }()
	natsPort := strings.TrimPrefix(c.url[strings.LastIndex(c.url, ":"):], ":")
	anyPort := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)

	r, err := toolrunner.New(toolrunner.Config{NATSURL: c.url, WorkspaceRoot: c.root, Pool: "test", HTTPAddr: "127.0.0.1:0",
		SandboxPolicy: sandbox.Policy{CPUTime: time.Second, FileSize: 1 << 20, Processes: 64},
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil))})
	must(err)
	defer kittest.Run(t, context.Background(), "toolrunner", r.Run)()
	kittest.Eventually(t, 30*time.Second, "runner ready", r.Ready)

	bash := func(cmd string) string {
		b, _ := json.Marshal(map[string]any{"command": cmd, "timeout": 20})
		return string(b)
	}
	path := func(p string) string { return fmt.Sprintf(`{"path":%q}`, p) }
	pid := fmt.Sprint(os.Getpid())
	attacks := []struct {
		name, tool, args string
		want             string // in the error result's text ("" = any error)
	}{
		{"read /etc/passwd", "bash", bash("cat /etc/passwd"), "Permission denied"},
		{"list /", "bash", bash("ls /"), "Permission denied"},
		{"read a file outside", "bash", bash("cat " + filepath.Join(outside, "secret")), "Permission denied"},
		{"read another session's workspace", "bash", bash("cat " + filepath.Join(other, "secret")), "Permission denied"},
		{"list the workspace root", "bash", bash("ls " + c.root), "Permission denied"},
		{"read the data dir", "bash", bash("cat " + filepath.Join(data, "nats", "store")), "Permission denied"},
		{"read the toolrunner's environ", "bash", bash("cat /proc/" + pid + "/environ"), "No such file"},
		{"write outside", "bash", bash("echo pwned > " + filepath.Join(outside, "new")), "Permission denied"},
		{"follow a symlink out", "bash", bash("cat out/secret"), "Permission denied"},
		{"connect to NATS", "bash", bash("echo > /dev/tcp/127.0.0.1/" + natsPort), "connect"},
		{"connect to any TCP port", "bash", bash("echo > /dev/tcp/127.0.0.1/" + anyPort), "connect"},
		{"fork bomb", "bash", `{"command":":(){ :|:& };: ; sleep 10","timeout":3}`, "Resource temporarily unavailable"},
		{"fill the disk", "bash", bash("head -c 4M /dev/zero > big"), ""},
		{"run past the CPU limit", "bash", bash("bash -c 'while :; do :; done'"), ""},
		{"kill the toolrunner", "bash", bash("kill -9 " + pid), "No such process"},
		{"read ..", "read", path("../s2/secret"), "escapes the workspace"},
		{"read an absolute path", "read", path(filepath.Join(outside, "secret")), "outside the workspace"},
		{"read through a symlink", "read", path("out/secret"), "outside the workspace"},
		{"read a hard link", "read", path("hard"), "hard links"},
		{"edit a hard link", "edit", `{"path":"hard","edits":[{"oldText":"OUTSIDE","newText":"x"}]}`, "hard links"},
		{"read a device file", "read", path("mem"), "not a regular file"},
		{"write ..", "write", `{"path":"../s2/x","content":"x"}`, "escapes the workspace"},
		{"write an absolute path", "write", fmt.Sprintf(`{"path":%q,"content":"x"}`, filepath.Join(outside, "w")), "outside the workspace"},
		{"ls outside", "ls", path(outside), "outside the workspace"},
	}
	n := 0
	for i, a := range attacks {
		id := fmt.Sprintf("attack-%d", i)
		c.dispatch(t, "s1", id, a.tool, a.args)
		c.dispatch(t, "s1", id+"-next", "bash", bash("echo alive"))
		n += 2
		got := c.waitResults(t, n)
		res := got[id]
		if len(res) != 1 || !res[0].IsError || !strings.Contains(text(res[0]), a.want) {
			t.Errorf("%s: %s, want an error result containing %q", a.name, describe(res), a.want)
		}
		for _, secret := range []string{"OUTSIDE-SECRET", "OTHER-SESSION-SECRET", "DATA-DIR-SECRET", "CAIRN_"} {
			if len(res) == 1 && strings.Contains(text(res[0]), secret) {
				t.Errorf("%s: the result leaks %s: %s", a.name, secret, text(res[0]))
			}
		}
		if next := got[id+"-next"]; len(next) != 1 || next[0].IsError || !strings.Contains(text(next[0]), "alive") {
			t.Errorf("after %s the runner did not serve the next call: %s", a.name, describe(next))
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); err == nil {
		t.Errorf("write outside: %s exists", filepath.Join(outside, "new"))
	}
	if fi, err := os.Stat(filepath.Join(ws, "big")); err == nil && fi.Size() > 1<<20 {
		t.Errorf("fill the disk: big is %d bytes, over the 1 MiB file size limit", fi.Size())
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret")); string(b) != "OUTSIDE-SECRET" {
		t.Errorf("the file behind the hard link changed: %q", b)
	}

	legit := []struct{ name, tool, args, want string }{
		{"ls", "ls", path("."), "out"},
		{"write", "write", `{"path":"src/hello.py","content":"print('hello from python', 6*7)\n"}`, ""},
		{"edit", "edit", `{"path":"src/hello.py","edits":[{"oldText":"6*7","newText":"6*8"}]}`, ""},
		{"read", "read", path("src/hello.py"), "6*8"},
		{"python3", "bash", bash("python3 src/hello.py"), "hello from python 48"},
		{"git", "bash", bash("git init -q repo && cd repo && echo x > f && git add f && " +
			"git -c user.name=t -c user.email=t@example.com commit -qm first && git log --format=%s"), "first"},
		{"grep", "grep", `{"pattern":"python"}`, "hello.py"},
		{"tmp", "bash", bash(`echo t > "$TMPDIR/x" && cat "$TMPDIR/x" && echo $HOME`), ws},
	}
	for i, l := range legit {
		id := fmt.Sprintf("legit-%d", i)
		c.dispatch(t, "s1", id, l.tool, l.args)
		n++
		res := c.waitResults(t, n)[id]
		if len(res) != 1 || res[0].IsError || !strings.Contains(text(res[0]), l.want) {
			t.Errorf("legit %s: %s, want success containing %q", l.name, describe(res), l.want)
		}
	}

	// The level in force, on /readyz and /metrics.
	body := get(t, "http://"+r.HTTPAddr()+"/readyz")
	if !strings.Contains(body, `"sandbox":"required"`) {
		t.Errorf("/readyz = %s, want the sandbox level", body)
	}
	metrics := get(t, "http://"+r.HTTPAddr()+"/metrics")
	if !strings.Contains(metrics, `cairn_toolrunner_sandbox_level{level="required"} 1`) ||
		!strings.Contains(metrics, `cairn_toolrunner_sandbox_level{level="off"} 0`) {
		t.Errorf("/metrics lacks the sandbox level gauge")
	}
}

func text(r toolbus.Result) string {
	var b strings.Builder
	for _, bl := range r.Content {
		b.WriteString(bl.Text)
	}
	return b.String()
}

func describe(rs []toolbus.Result) string {
	if len(rs) != 1 {
		return fmt.Sprintf("%d results", len(rs))
	}
	return fmt.Sprintf("isError=%v %q", rs[0].IsError, text(rs[0]))
}

func get(t *testing.T, u string) string {
	t.Helper()
	if _, err := url.Parse(u); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
