package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The proxy is how a call reaches Policy.AllowHosts. It runs in the
// toolrunner, outside every call's namespaces, listening on a unix socket
// in the sandbox's temp directory. Each call's child, in a network
// namespace of its own, brings up lo, listens on 127.0.0.1:ProxyPort and
// starts a bridge that forwards each connection to the socket; the call's
// environment names http://127.0.0.1:ProxyPort as its proxy. The proxy
// reads one request per connection (CONNECT host:port, or a plain-HTTP
// request with an absolute URI), refuses with 403 and the reason every
// target not listed, resolves names itself and dials the address it
// checked (no second lookup a rebinding DNS could answer differently).

// ProxyPort is the loopback port, inside a call's network namespace, of
// the proxy to Policy.AllowHosts.
const ProxyPort = 3128

const (
	proxyHeaderMax  = 64 << 10
	proxyHeaderWait = 30 * time.Second
	proxyDialWait   = 10 * time.Second
)

type proxy struct {
	hosts    []AllowedHost
	ln       net.Listener
	log      *slog.Logger
	counter  *prometheus.CounterVec
	resolver *net.Resolver
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	closed   bool
}

func newProxyCounter() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_sandbox_proxy_requests_total",
		Help: "Requests of tool calls to the allowed-hosts proxy, by decision (allowed, refused)."}, []string{"decision"})
}

// startProxy listens on the unix socket path and serves until close.
func startProxy(path string, hosts []AllowedHost, counter *prometheus.CounterVec, log *slog.Logger) (*proxy, error) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("sandbox: proxy socket: %w", err)
	}
	p := &proxy{hosts: hosts, ln: ln, log: log, counter: counter, resolver: net.DefaultResolver, conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.serve)
	return p, nil
}

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		if !p.track(c, true) {
			_ = c.Close()
			return
		}
		p.wg.Go(func() {
			defer p.track(c, false)
			defer func() { _ = c.Close() }()
			p.handle(c)
		})
	}
}

func (p *proxy) track(c net.Conn, add bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if add {
		if p.closed {
			return false
		}
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
	return true
}

// close stops accepting and ends every connection.
func (p *proxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// handle serves one connection: one request, then the tunnel or the one
// response.
func (p *proxy) handle(c net.Conn) {
	lr := &io.LimitedReader{R: c, N: proxyHeaderMax}
	br := bufio.NewReader(lr)
	_ = c.SetReadDeadline(time.Now().Add(proxyHeaderWait))
	req, err := http.ReadRequest(br)
	if err != nil {
		reply(c, http.StatusBadRequest, "sandbox proxy: not an HTTP proxy request")
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	lr.N = math.MaxInt64
	var host, portStr string
	connect := req.Method == http.MethodConnect
	if connect {
		host, portStr, err = net.SplitHostPort(req.RequestURI)
		if err != nil {
			p.refuse(c, "", http.StatusBadRequest, "sandbox proxy: CONNECT wants host:port")
			return
		}
	} else {
		if req.URL.Scheme != "http" || req.URL.Host == "" {
			p.refuse(c, "", http.StatusBadRequest, "sandbox proxy: want CONNECT, or an absolute http:// URI (use CONNECT for https)")
			return
		}
		host, portStr = req.URL.Hostname(), req.URL.Port()
		if portStr == "" {
			portStr = "80"
		}
	}
	n, err := strconv.ParseUint(portStr, 10, 16)
	name := normHost(host)
	if err != nil || n == 0 || name == "" {
		p.refuse(c, "", http.StatusBadRequest, "sandbox proxy: bad target host or port")
		return
	}
	port := uint16(n)
	entry, ok := p.allowed(name, port)
	if !ok {
		p.refuse(c, name, http.StatusForbidden, fmt.Sprintf("sandbox proxy: %s port %d is not in the pool's allowed hosts", name, port))
		return
	}
	addr, err := p.resolve(req.Context(), entry, name)
	if err != nil {
		p.refuse(c, name, http.StatusForbidden, "sandbox proxy: "+err.Error())
		return
	}
	dctx, cancel := context.WithTimeout(context.Background(), proxyDialWait)
	up, err := (&net.Dialer{}).DialContext(dctx, "tcp", netip.AddrPortFrom(addr, port).String())
	cancel()
	if err != nil {
		p.count("allowed", name)
		reply(c, http.StatusBadGateway, fmt.Sprintf("sandbox proxy: connect to %s: unreachable", name))
		return
	}
	defer func() { _ = up.Close() }()
	p.count("allowed", name)
	if connect {
		if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
			return
		}
		pipe(c, up, br)
		return
	}
	// One request per connection: a second one on it could name another
	// host, so the request goes with Connection: close and the connection
	// ends with the response.
	req.Header.Del("Proxy-Connection")
	req.Header.Del("Proxy-Authorization")
	req.Close = true
	if err := req.Write(up); err != nil {
		return
	}
	_, _ = io.Copy(c, up)
}

// allowed returns the entry that lets a call reach name:port.
func (p *proxy) allowed(name string, port uint16) (AllowedHost, bool) {
	for _, h := range p.hosts {
		if h.allows(name, port) {
			return h, true
		}
	}
	return AllowedHost{}, false
}

// resolve returns the address to dial: an IP literal listed as such is
// dialled whatever it is; a name must resolve to public addresses only
// (DNS rebinding onto loopback, private or link-local is refused).
func (p *proxy) resolve(ctx context.Context, entry AllowedHost, name string) (netip.Addr, error) {
	if a, err := netip.ParseAddr(name); err == nil {
		if entry.literal() || public(a) {
			return a, nil
		}
		return netip.Addr{}, fmt.Errorf("%s is not a public address", name)
	}
	ctx, cancel := context.WithTimeout(ctx, proxyDialWait)
	defer cancel()
	addrs, err := p.resolver.LookupNetIP(ctx, "ip", name)
	if err != nil || len(addrs) == 0 {
		return netip.Addr{}, fmt.Errorf("%s does not resolve", name)
	}
	for _, a := range addrs {
		if !public(a) {
			return netip.Addr{}, fmt.Errorf("%s resolves to a loopback, private or link-local address; list the address itself to allow it", name)
		}
	}
	return addrs[0].Unmap(), nil
}

func (p *proxy) refuse(c net.Conn, host string, code int, why string) {
	p.count("refused", host)
	reply(c, code, why)
}

func (p *proxy) count(decision, host string) {
	p.counter.WithLabelValues(decision).Inc()
	p.log.Debug("sandbox proxy", "decision", decision, "host", host)
}

// reply writes a complete response with the reason as its body.
func reply(c net.Conn, code int, why string) {
	why += "\n"
	_, _ = fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, http.StatusText(code), len(why), why)
}

// pipe copies both ways until both directions end; from is what the client
// sent after its request (buffered).
func pipe(c, up net.Conn, from io.Reader) {
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(up, from)
		closeWrite(up)
		close(done)
	}()
	_, _ = io.Copy(c, up)
	// The target is done: a client still sending is cut off.
	_ = c.Close()
	_ = up.Close()
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}
