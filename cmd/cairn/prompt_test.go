package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/cairn-agents/cairn/pkg/events"
)

// These tests run the whole platform in process and put a proxy between
// `cairn prompt`'s client and the gateway that loses events or cuts the
// event stream, as NATS, a restarted gateway or a broken connection would.

// startTestPlatform runs every service in this process with the e2e script.
func startTestPlatform(t *testing.T) *platform {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "script.json")
	if err := os.WriteFile(script, []byte(e2eScript), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p, err := startPlatform(ctx, platformConfig{DataDir: filepath.Join(dir, "data"), HTTPAddr: "127.0.0.1:0",
		NATSListen: "127.0.0.1:0", Script: script, Model: "scripted/e2e", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := p.wait(); err != nil {
			t.Errorf("platform stopped with %v", err)
		}
	})
	recordPlatform(t, p)
	return p
}

// proxyAction says what the proxy does with one event of a stream.
type proxyAction int

const (
	forward proxyAction = iota
	drop                // not delivered
	// cutAfter delivers the event, then delivers nothing more: it reads
	// on until the run's agent_end has passed, then ends the response.
	cutAfter
)

// sseProxy forwards every request to the gateway, and applies decide to
// each event of each /events response (conn counts those responses).
type sseProxy struct {
	srv    *httptest.Server
	decide func(conn int, ev events.Event) proxyAction

	mu        sync.Mutex
	conns     int
	resumedAt []string // the Last-Event-ID of each events request
	dropped   chan struct{}
	dropOnce  sync.Once
	forwarded atomic.Int64 // events delivered
}

func newSSEProxy(t *testing.T, target string, decide func(conn int, ev events.Event) proxyAction) *sseProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &sseProxy{decide: decide, dropped: make(chan struct{})}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(resp *http.Response) error {
		if !strings.HasSuffix(resp.Request.URL.Path, "/events") {
			return nil
		}
		p.mu.Lock()
		conn := p.conns
		p.conns++
		p.resumedAt = append(p.resumedAt, resp.Request.Header.Get("Last-Event-ID"))
		p.mu.Unlock()
		resp.Body = &filterBody{p: p, conn: conn, up: bufio.NewReader(resp.Body), body: resp.Body}
		return nil
	}
	p.srv = httptest.NewServer(rp)
	t.Cleanup(p.srv.Close)
	return p
}

func (p *sseProxy) resumes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.resumedAt...)
}

// filterBody reads the gateway's event stream block by block and passes on
// what the proxy's decide lets through.
type filterBody struct {
	p    *sseProxy
	conn int
	up   *bufio.Reader
	body io.Closer
	out  []byte
	cut  bool
}

func (b *filterBody) Read(buf []byte) (int, error) {
	for len(b.out) == 0 {
		block, err := b.block()
		if err != nil {
			return 0, err
		}
		data, ok := blockData(block)
		if !ok {
			if !b.cut {
				b.out = block
			}
			continue
		}
		ev, err := events.DecodeEvent([]byte(data))
		if err != nil {
			return 0, err
		}
		if b.cut {
			if ev.Type == events.EvAgentEnd {
				return 0, io.EOF
			}
			continue
		}
		switch b.p.decide(b.conn, ev) {
		case forward:
			b.out = block
			b.p.forwarded.Add(1)
		case drop:
			b.p.dropOnce.Do(func() { close(b.p.dropped) })
		case cutAfter:
			b.out, b.cut = block, true
			b.p.forwarded.Add(1)
		}
	}
	n := copy(buf, b.out)
	b.out = b.out[n:]
	return n, nil
}

// block reads one SSE block, its blank line included.
func (b *filterBody) block() ([]byte, error) {
	var block []byte
	for {
		line, err := b.up.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		block = append(block, line...)
		if len(line) == 1 {
			return block, nil
		}
	}
}

func (b *filterBody) Close() error { return b.body.Close() }

func blockData(block []byte) (string, bool) {
	for line := range strings.SplitSeq(string(block), "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			return d, true
		}
	}
	return "", false
}

// handQuiet is a quiet timer the test fires. The follower resets it on
// each event it takes, so resets counts the events it has taken.
type handQuiet struct {
	c      chan time.Time
	resets *atomic.Int64
}

func (h handQuiet) C() <-chan time.Time { return h.c }
func (h handQuiet) Reset()              { h.resets.Add(1) }
func (handQuiet) Stop()                 {}

// promptThrough creates session sid and runs promptAndFollow through the
// proxy; fire, if not nil, is called with the quiet timer's channel while
// the prompt runs, and must return once done is closed.
func promptThrough(t *testing.T, p *platform, proxy *sseProxy, sid string, fire func(quiet chan<- time.Time, taken *atomic.Int64, done <-chan struct{})) string {
	t.Helper()
	cl, err := client.New(proxy.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	quiet := make(chan time.Time)
	var taken atomic.Int64
	pr := &prompter{cl: cl, quiet: func() quietTimer { return handQuiet{c: quiet, resets: &taken} }}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := cl.CreateSession(ctx, client.CreateSession{ID: sid}, client.WaitApplied()); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	done := make(chan struct{})
	var wg sync.WaitGroup
	if fire != nil {
		wg.Go(func() { fire(quiet, &taken, done) })
	}
	err = pr.run(ctx, &out, sid, "please list files", "reject")
	close(done)
	wg.Wait()
	if err != nil {
		t.Fatalf("prompt: %v\noutput:\n%s", err, out.String())
	}
	return out.String()
}

func checkOutputOnce(t *testing.T, out string) {
	t.Helper()
	for _, want := range []string{"→ ls", "← ls ok", "I see the files."} {
		if n := strings.Count(out, want); n != 1 {
			t.Errorf("output shows %q %d times, want once:\n%s", want, n, out)
		}
	}
}

func TestPromptSurvivesLostEvents(t *testing.T) {
	p := startTestPlatform(t)

	t.Run("agent_end lost", func(t *testing.T) {
		proxy := newSSEProxy(t, p.URL, func(_ int, ev events.Event) proxyAction {
			if ev.Type == events.EvAgentEnd {
				return drop
			}
			return forward
		})
		out := promptThrough(t, p, proxy, "lost1", fireAfterDrop(proxy))
		checkOutputOnce(t, out)
	})

	t.Run("the final answer's events lost", func(t *testing.T) {
		// Everything after the tool's result is lost: the answer is printed
		// from the log.
		var mu sync.Mutex
		afterTool := false
		proxy := newSSEProxy(t, p.URL, func(_ int, ev events.Event) proxyAction {
			mu.Lock()
			defer mu.Unlock()
			if afterTool {
				return drop
			}
			afterTool = ev.Type == events.EvToolExecutionEnd
			return forward
		})
		out := promptThrough(t, p, proxy, "lost2", fireAfterDrop(proxy))
		checkOutputOnce(t, out)
		if !strings.HasSuffix(out, "I see the files.\n") {
			t.Errorf("output does not end with the answer:\n%s", out)
		}
	})

	t.Run("stream cut mid-run resumes", func(t *testing.T) {
		// The first connection is cut after the tool starts and closed
		// only once the run has ended: the rest comes from the resumed
		// stream's replay. The quiet timer never fires.
		proxy := newSSEProxy(t, p.URL, func(conn int, ev events.Event) proxyAction {
			if conn == 0 && ev.Type == events.EvToolExecutionStart {
				return cutAfter
			}
			return forward
		})
		out := promptThrough(t, p, proxy, "cut1", nil)
		checkOutputOnce(t, out)
		r := proxy.resumes()
		if len(r) != 2 || r[0] != "" || r[1] == "" {
			t.Fatalf("event requests' Last-Event-ID = %q, want a fresh stream then a resumed one", r)
		}
	})
}

// fireAfterDrop fires the quiet timer once the proxy has lost an event and
// the follower has taken every event the proxy delivered (it is then quiet
// for good), again each time the follower waits once more (the log may not
// show the end yet), until the prompt returns.
func fireAfterDrop(proxy *sseProxy) func(chan<- time.Time, *atomic.Int64, <-chan struct{}) {
	return func(quiet chan<- time.Time, taken *atomic.Int64, done <-chan struct{}) {
		select {
		case <-proxy.dropped:
		case <-done:
			return
		}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if taken.Load() < proxy.forwarded.Load() {
				select {
				case <-tick.C:
				case <-done:
					return
				}
				continue
			}
			select {
			case quiet <- time.Now():
			case <-done:
				return
			}
		}
	}
}
