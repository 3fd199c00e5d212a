package sandbox_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/sandbox"
	"github.com/prometheus/client_golang/prometheus"
)

func TestParseAllowHosts(t *testing.T) {
	got, err := sandbox.ParseAllowHosts(" API.Example.com., 10.0.0.1:8080,[::1]:443,example.org:22 ,")
	if err != nil {
		t.Fatal(err)
	}
	want := []sandbox.AllowedHost{{Host: "api.example.com"}, {Host: "10.0.0.1", Port: 8080}, {Host: "::1", Port: 443}, {Host: "example.org", Port: 22}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ParseAllowHosts = %v, want %v", got, want)
	}
	for entry, why := range map[string]string{
		"*.example.com": "wildcards", "http://example.com": "scheme", "example.com:0": "1-65535", "example.com:99999": "1-65535",
		"example.com:": "empty port", "a@example.com": "user", "[::1": "unclosed", "[example.com]:80": "IPv6",
		"exa mple.com": "scheme", "-bad.example": "host name", "a..b": "host name", "fe80::1%eth0": "zoned", "ex!ample.com": "host name",
	} {
		_, err := sandbox.ParseAllowHosts(entry)
		if err == nil || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), entry) {
			t.Errorf("ParseAllowHosts(%q) = %v, want an error naming the entry and %q", entry, err, why)
		}
	}
	p := sandbox.Policy{AllowPorts: []uint16{443}, AllowHosts: want[:1]}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "exclude each other") {
		t.Errorf("ports and hosts: Validate = %v, want them refused together", err)
	}
	p = sandbox.Policy{AllowHosts: []sandbox.AllowedHost{{Host: "Bad Host"}}}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "allowHosts") {
		t.Errorf("unnormalised host: Validate = %v, want allowHosts named", err)
	}
}

// hostServer is a real HTTP server on the host's loopback, outside every
// call's network namespace.
func hostServer(t testing.TB) (*httptest.Server, uint16) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = fmt.Fprintf(w, "hello from the host, %s %s\n", r.Method, r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	return srv, uint16(srv.Listener.Addr().(*net.TCPAddr).Port)
}

func proxySandbox(t testing.TB, hosts string) (*sandbox.Sandbox, *prometheus.Registry) {
	allow, err := sandbox.ParseAllowHosts(hosts)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.New(sandbox.Required, sandbox.Policy{AllowHosts: allow}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeSandbox(t, sb) })
	reg := prometheus.NewRegistry()
	if err := reg.Register(sb.Collector()); err != nil {
		t.Fatal(err)
	}
	return sb, reg
}

func decisions(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			out[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
		}
	}
	return out
}

// TestAllowHostsThroughTheProxy: a call reaches a listed host only through
// the proxy, with curl (plain HTTP and CONNECT) and python3; everything else
// is refused with the reason, and the call has no other way out.
func TestAllowHostsThroughTheProxy(t *testing.T) {
	_, p := hostServer(t)
	_, other := hostServer(t)
	sb, reg := proxySandbox(t, fmt.Sprintf("127.0.0.1:%d,localhost:%d", p, p))
	bash := tools(t, sb, t.TempDir())["bash"]
	cmd := func(c string) (string, bool) {
		t.Helper()
		r := run(t, bash, fmt.Sprintf(`{"command":%q}`, c))
		return textOf(r), r.IsError
	}
	ok := []struct{ name, cmd, want string }{
		{"curl plain http", fmt.Sprintf("curl -sS --max-time 30 http://127.0.0.1:%d/plain", p), "hello from the host, GET /plain"},
		{"curl connect", fmt.Sprintf("curl -sS --max-time 30 --proxytunnel http://127.0.0.1:%d/tunnel", p), "hello from the host, GET /tunnel"},
		{"python3", fmt.Sprintf(`python3 -c 'import urllib.request as u; print(u.urlopen("http://127.0.0.1:%d/py", timeout=30).read().decode())'`, p),
			"hello from the host, GET /py"},
	}
	for _, c := range ok {
		if out, failed := cmd(c.cmd); failed || !strings.Contains(out, c.want) {
			t.Errorf("%s: %q (error %v), want %q", c.name, out, failed, c.want)
		}
	}
	refused := []struct{ name, cmd, want string }{
		{"host not listed", fmt.Sprintf("curl -sS --max-time 30 http://127.0.0.2:%d/", p), "127.0.0.2 port"},
		{"name not listed", "curl -sS --max-time 30 http://example.com/", "example.com port 80 is not in the pool's allowed hosts"},
		{"listed host, other port", fmt.Sprintf("curl -sS --max-time 30 --proxytunnel http://127.0.0.1:%d/", other), "403"},
		{"listed host, other port, plain", fmt.Sprintf("curl -sS --max-time 30 http://127.0.0.1:%d/", other), fmt.Sprintf("127.0.0.1 port %d is not", other)},
		{"name resolving to loopback", fmt.Sprintf("curl -sS --max-time 30 http://localhost:%d/", p), "resolves to a loopback, private or link-local address"},
		{"direct, no proxy", fmt.Sprintf("curl -sS --max-time 30 --noproxy '*' http://127.0.0.1:%d/", p), "Failed to connect"},
		{"direct, bash", fmt.Sprintf("echo hi > /dev/tcp/127.0.0.1/%d && echo connected", p), "Permission denied"},
		{"direct, off the host", "echo hi > /dev/tcp/192.0.2.1/3128 && echo connected", "unreachable"},
	}
	for _, c := range refused {
		out, _ := cmd(c.cmd)
		if !strings.Contains(out, c.want) || strings.Contains(out, "hello from the host") {
			t.Errorf("%s: %q, want it refused with %q", c.name, out, c.want)
		}
	}
	// Garbage on the proxy's loopback port, from inside the call.
	out, _ := cmd(fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/%d; printf 'garbage\r\n\r\n' >&3; cat <&3`, sandbox.ProxyPort))
	if !strings.Contains(out, "400 Bad Request") || !strings.Contains(out, "not an HTTP proxy request") {
		t.Errorf("garbage through the bridge: %q, want 400 naming the problem", out)
	}
	d := decisions(t, reg)
	if d["allowed"] != float64(len(ok)) || d["refused"] < 5 {
		t.Errorf("counter = %v, want %d allowed and at least 5 refused", d, len(ok))
	}
}

// TestProxySocketGarbage: whatever reaches the proxy's socket is answered
// or dropped, and the proxy keeps serving.
func TestProxySocketGarbage(t *testing.T) {
	_, p := hostServer(t)
	sb, _ := proxySandbox(t, fmt.Sprintf("127.0.0.1:%d", p))
	sock := sandbox.ProxySocket(sb)
	if sock == "" {
		t.Fatal("no proxy socket with hosts allowed")
	}
	for name, in := range map[string]string{
		"binary":          "\x00\x01\x02\xff\r\n\r\n",
		"origin form":     "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
		"https absolute":  fmt.Sprintf("GET https://127.0.0.1:%d/ HTTP/1.1\r\nHost: x\r\n\r\n", p),
		"connect no port": "CONNECT 127.0.0.1 HTTP/1.1\r\n\r\n",
		"huge header":     "GET http://127.0.0.1/ HTTP/1.1\r\nX: " + strings.Repeat("a", 100<<10) + "\r\n\r\n",
		"half and close":  "CONNECT 127.0.0.1:",
	} {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(c, in)
		_ = c.(*net.UnixConn).CloseWrite()
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %v %v, want 400", name, resp, err)
		}
		_ = c.Close()
	}
	// Still serving.
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	_, _ = fmt.Fprintf(c, "GET http://127.0.0.1:%d/after HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", p)
	body, _ := io.ReadAll(c)
	if !strings.Contains(string(body), "hello from the host, GET /after") {
		t.Errorf("after the garbage: %q, want the host's answer", body)
	}
}

// BenchmarkProxiedRequest: the latency the allowed-hosts path adds to one
// HTTP request: curl from a bash call reaching a host-side server directly
// (--sandbox-allow-ports, host network) and through the bridge and proxy
// (--sandbox-allow-hosts). Each bash call runs 20 requests; ms/request is
// the call's time over 20, curl's start included in both.
func BenchmarkProxiedRequest(b *testing.B) {
	_, p := hostServer(b)
	const n = 20
	for _, c := range []struct {
		name   string
		policy sandbox.Policy
	}{
		{"direct-allow-ports", sandbox.Policy{AllowPorts: []uint16{p}}},
		{"proxy-allow-hosts", sandbox.Policy{AllowHosts: []sandbox.AllowedHost{{Host: "127.0.0.1", Port: p}}}},
	} {
		sb, err := sandbox.New(sandbox.Required, c.policy, nil)
		if err != nil {
			b.Fatal(err)
		}
		bash := tools(b, sb, b.TempDir())["bash"]
		args := fmt.Sprintf(`{"command":"for i in $(seq %d); do curl -sf -o /dev/null http://127.0.0.1:%d/ || exit 1; done"}`, n, p)
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if r := run(b, bash, args); r.IsError {
					b.Fatal(textOf(r))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N*n), "ms/request")
		})
		closeSandbox(b, sb)
	}
}

// TestBestEffortWithoutNetworkNamespace: at best-effort on a kernel without
// network namespaces the allowed hosts get no proxy (none is started: it
// would have no namespace to bridge into) and calls still have no network:
// Landlock refuses every TCP connection, to a listed host's port too, and
// the file tools still work.
func TestBestEffortWithoutNetworkNamespace(t *testing.T) {
	f := sandbox.Probe()
	if f.LandlockABI < 4 {
		t.Fatalf("this kernel's Landlock ABI %d lacks TCP rules (4): the test needs them", f.LandlockABI)
	}
	f.NetNS = false
	defer sandbox.SetProbe(func() sandbox.Features { return f })()
	_, p := hostServer(t)
	allow, err := sandbox.ParseAllowHosts(fmt.Sprintf("127.0.0.1:%d", p))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sandbox.New(sandbox.Required, sandbox.Policy{AllowHosts: allow}, nil); !errors.Is(err, sandbox.ErrUnavailable) ||
		!strings.Contains(err.Error(), "network namespace") {
		t.Fatalf("required without network namespaces: %v, want ErrUnavailable naming the network namespace", err)
	}
	sb, err := sandbox.New(sandbox.BestEffort, sandbox.Policy{AllowHosts: allow}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closeSandbox(t, sb)
	if s := sandbox.ProxySocket(sb); s != "" {
		t.Errorf("a proxy was started (%s) with no network namespace to bridge into", s)
	}
	dir := t.TempDir()
	ts := tools(t, sb, dir)
	for _, c := range []struct{ cmd, want string }{
		{fmt.Sprintf("echo hi > /dev/tcp/127.0.0.1/%d", p), "Permission denied"},
		{fmt.Sprintf("curl -sS --max-time 5 http://127.0.0.1:%d/", p), "Failed to connect"},
	} {
		r := run(t, ts["bash"], fmt.Sprintf(`{"command":%q}`, c.cmd))
		if !r.IsError || !strings.Contains(textOf(r), c.want) || strings.Contains(textOf(r), "hello") {
			t.Errorf("%s: %q, want it refused (%s)", c.cmd, textOf(r), c.want)
		}
	}
	if r := run(t, ts["write"], `{"path":"a.txt","content":"local"}`); r.IsError {
		t.Errorf("write: %s", textOf(r))
	}
	if r := run(t, ts["read"], `{"path":"a.txt"}`); r.IsError || !strings.Contains(textOf(r), "local") {
		t.Errorf("read: %q", textOf(r))
	}
}
