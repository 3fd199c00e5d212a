package mcptool

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/internal/mcptest"
	"github.com/cairn-agents/cairn/pkg/provider/secret"
	"github.com/cairn-agents/cairn/pkg/tool"
)

func TestMain(m *testing.M) {
	kittest.Main(m, kittest.Children{"mcpserver": mcptest.Serve})
}

// stdioServer is the test server as a stdio command: this test binary
// re-executed as the child role.
func stdioServer(name string, env ...string) Server {
	cmd := kittest.Command("mcpserver", env...)
	return Server{Name: name, Command: cmd.Args, Env: append([]string{"CAIRN_TEST_CHILD=mcpserver"}, env...)}
}

// httpServer starts the test server over streamable HTTP in a child
// process and returns its URL.
func httpServer(t testing.TB, token string) string {
	t.Helper()
	cmd := kittest.Command("mcpserver", "MCPTEST_HTTP=1", "MCPTEST_TOKEN="+token)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the HTTP server did not print its URL: %v", err)
	}
	return strings.TrimSpace(line)
}

type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func start(t testing.TB, servers ...Server) (*Set, *logBuf) {
	t.Helper()
	lb := &logBuf{}
	s, err := Start(context.Background(), servers, slog.New(slog.NewTextHandler(lb, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, lb
}

func find(t testing.TB, s *Set, name string) tool.Tool {
	t.Helper()
	for _, tl := range s.Tools() {
		if tl.Spec().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s among %v", name, names(s.Tools()))
	return nil
}

func names(tools []tool.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Spec().Name)
	}
	return out
}

func call(t *testing.T, tl tool.Tool, args string) tool.Result {
	t.Helper()
	r, err := tl.Execute(context.Background(), tool.Call{ID: "c1", Name: tl.Spec().Name, Arguments: json.RawMessage(args)}, nil)
	if err != nil {
		t.Fatalf("%s: %v", tl.Spec().Name, err)
	}
	return r
}

func text(r tool.Result) string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// Both transports serve the same tools with the same results.
func TestToolsOverStdioAndHTTP(t *testing.T) {
	url := httpServer(t, "s3cret-token")
	s, logs := start(t, stdioServer("local"),
		Server{Name: "remote", URL: url, Headers: map[string]secret.Secret{"Authorization": "Bearer s3cret-token"}, Idempotent: true})
	for _, srv := range []string{"local", "remote"} {
		t.Run(srv, func(t *testing.T) {
			echo := find(t, s, "mcp__"+srv+"__echo")
			sp := echo.Spec()
			if sp.Idempotent != (srv == "remote") || !strings.Contains(string(sp.Parameters), `"text"`) || sp.Description != "Echo text back" {
				t.Fatalf("spec %+v", sp)
			}
			if r := call(t, echo, `{"text":"hello"}`); r.IsError || text(r) != "hello" {
				t.Fatalf("echo: %+v", r)
			}
			img := call(t, find(t, s, "mcp__"+srv+"__image"), `{}`)
			if len(img.Content) != 2 || img.Content[1].Type != "image" || img.Content[1].MimeType != "image/png" ||
				img.Content[1].Data != base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nfake")) {
				t.Fatalf("image: %+v", img)
			}
			if r := call(t, find(t, s, "mcp__"+srv+"__fail"), `{}`); !r.IsError || text(r) != "disk on fire" {
				t.Fatalf("fail: %+v", r)
			}
			flood := call(t, find(t, s, "mcp__"+srv+"__flood"), `{}`)
			if got := len(text(flood)); got > MaxResultBytes+100 || !strings.Contains(text(flood), "[output cut at 262144 bytes]") {
				t.Fatalf("flood: %d bytes", got)
			}
		})
	}
	// Names and schemas Cairn refuses are left out, each said once per server.
	for _, n := range names(s.Tools()) {
		if strings.Contains(n, "bad") || strings.Contains(n, "broken") {
			t.Errorf("refused tool %s is served", n)
		}
	}
	probs := strings.Join(s.Problems(), "\n")
	for _, want := range []string{`mcp server "local": tool "bad.name": mcp__local__bad.name is not a valid tool name`,
		`mcp server "remote": tool "broken": the input schema does not compile`} {
		if !strings.Contains(probs, want) {
			t.Errorf("problems %q lack %q", probs, want)
		}
	}
	if strings.Contains(logs.String(), "s3cret") {
		t.Fatalf("the token is in the log:\n%s", logs)
	}
}

func TestWrongTokenIsAProblemNotAnError(t *testing.T) {
	url := httpServer(t, "right")
	s, logs := start(t, Server{Name: "remote", URL: url, Headers: map[string]secret.Secret{"Authorization": "Bearer wrong-token"}, StartTimeout: 5 * time.Second})
	if len(s.Tools()) != 0 {
		t.Fatalf("tools %v", names(s.Tools()))
	}
	if p := strings.Join(s.Problems(), "\n"); !strings.Contains(p, `mcp server "remote": connect:`) {
		t.Fatalf("problems %q", p)
	}
	if strings.Contains(logs.String(), "wrong-token") {
		t.Fatalf("the token is in the log:\n%s", logs)
	}
}

// A server that never answers does not hold up the others, and says why.
func TestHangingServerAtStart(t *testing.T) {
	hang := stdioServer("stuck", "MCPTEST_HANG=1")
	hang.StartTimeout = 300 * time.Millisecond
	s, _ := start(t, hang, stdioServer("ok"))
	if r := call(t, find(t, s, "mcp__ok__echo"), `{"text":"still here"}`); text(r) != "still here" {
		t.Fatalf("%+v", r)
	}
	if p := strings.Join(s.Problems(), "\n"); !strings.Contains(p, `mcp server "stuck" did not answer within 300ms`) {
		t.Fatalf("problems %q", p)
	}
}

func TestCallTimeoutIsAnErrorResult(t *testing.T) {
	srv := stdioServer("slow")
	srv.CallTimeout = 200 * time.Millisecond
	s, _ := start(t, srv)
	r := call(t, find(t, s, "mcp__slow__sleep"), `{"ms":600000}`)
	if !r.IsError || text(r) != `mcp server "slow", tool "sleep": no answer within 200ms` {
		t.Fatalf("%+v", r)
	}
	// The connection still serves.
	if r := call(t, find(t, s, "mcp__slow__echo"), `{"text":"after"}`); text(r) != "after" {
		t.Fatalf("%+v", r)
	}
}

// A stdio server that exits mid-call gives that call an error result and
// is started again: the next call reaches a new process.
func TestStdioServerRestartsAfterACrash(t *testing.T) {
	s, _ := start(t, stdioServer("fragile"))
	pid := text(call(t, find(t, s, "mcp__fragile__pid"), `{}`))
	r := call(t, find(t, s, "mcp__fragile__crash"), `{}`)
	if !r.IsError || !strings.HasPrefix(text(r), `mcp server "fragile", tool "crash": `) {
		t.Fatalf("crash: %+v", r)
	}
	var again string
	kittest.Eventually(t, 20*time.Second, "a new server process answers", func() bool {
		r := call(t, find(t, s, "mcp__fragile__pid"), `{}`)
		again = text(r)
		return !r.IsError
	})
	if again == pid || again == "" {
		t.Fatalf("pid before %s, after %s", pid, again)
	}
}

// tools/list_changed: the set lists again and tells its watcher.
func TestListChanged(t *testing.T) {
	for _, kind := range []string{"stdio", "http"} {
		t.Run(kind, func(t *testing.T) {
			srv := stdioServer("g")
			if kind == "http" {
				srv = Server{Name: "g", URL: httpServer(t, "")}
			}
			s, _ := start(t, srv)
			seen := make(chan []string, 16)
			s.Watch(func(tl []tool.Tool) { seen <- names(tl) })
			if first := <-seen; slices.Contains(first, "mcp__g__extra") || !slices.Contains(first, "mcp__g__grow") {
				t.Fatalf("first %v", first)
			}
			call(t, find(t, s, "mcp__g__grow"), `{}`)
			deadline := time.After(20 * time.Second)
			for {
				select {
				case n := <-seen:
					if slices.Contains(n, "mcp__g__extra") {
						if r := call(t, find(t, s, "mcp__g__extra"), `{}`); text(r) != "extra!" {
							t.Fatalf("%+v", r)
						}
						return
					}
				case <-deadline:
					t.Fatal("no list with mcp__g__extra")
				}
			}
		})
	}
}

func TestServerValidation(t *testing.T) {
	for _, c := range []struct {
		srv  Server
		want string
	}{
		{Server{Name: "a_b", Command: []string{"x"}}, `mcp server name "a_b": 1-32 characters`},
		{Server{Name: "", Command: []string{"x"}}, `mcp server name ""`},
		{Server{Name: "a"}, "a command or a URL is required"},
		{Server{Name: "a", Command: []string{"x"}, URL: "http://h"}, "not both"},
		{Server{Name: "a", URL: "ftp://user:pw@h/x?token=1"}, `URL "ftp://h/x" is not an http(s) URL`},
		{Server{Name: "a", URL: "http://h", Headers: map[string]secret.Secret{"Bad Name": "v"}}, "is not a valid HTTP header name"},
		{Server{Name: "a", URL: "http://h", Headers: map[string]secret.Secret{"X": "v\r\nInjected: 1"}}, "header X: the value has a line break"},
		{Server{Name: "a", Command: []string{"x"}, Headers: map[string]secret.Secret{"X": "v"}}, "headers are for HTTP servers only"},
	} {
		err := c.srv.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.srv, err, c.want)
		}
	}
	if _, err := Start(context.Background(), []Server{stdioServer("x"), stdioServer("x")}, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), `"x" is configured twice`) {
		t.Fatalf("%v", err)
	}
	if got := fmt.Sprint(Server{Name: "a", URL: "http://h", Headers: map[string]secret.Secret{"X": "tok"}}) + slogText(secret.Secret("tok")); strings.Contains(got, "tok") {
		t.Fatalf("secret printed: %s", got)
	}
}

func slogText(v any) string {
	var b bytes.Buffer
	slog.New(slog.NewTextHandler(&b, nil)).Info("x", "v", v)
	return b.String()
}

var _ = os.Getpid
