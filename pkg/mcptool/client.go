package mcptool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairn-agents/cairn/pkg/provider/secret"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// client owns the connection to one server. Its run goroutine is the only
// one that connects; calls read the current session under mu.
type client struct {
	srv     Server
	log     *slog.Logger
	changed func() // the set recomputes its tools
	relist  chan struct{}

	mu struct {
		sync.Mutex
		session  *mcp.ClientSession
		tools    []tool.Tool
		problems []string
		up       chan struct{} // closed when a session is up; replaced when it goes down
	}
}

func newClient(srv Server, log *slog.Logger, changed func()) *client {
	c := &client{srv: srv, log: log.With("mcpServer", srv.Name), changed: changed, relist: make(chan struct{}, 1)}
	c.mu.up = make(chan struct{})
	return c
}

// connect starts the server (stdio) or opens a session (HTTP), bounded by
// the start timeout, and lists its tools.
func (c *client) connect(ctx context.Context) (*mcp.ClientSession, error) {
	ctx, cancel := context.WithTimeout(ctx, c.srv.StartTimeout)
	defer cancel()
	var t mcp.Transport
	if len(c.srv.Command) > 0 {
		// The process outlives this start-up context: it is ended by closing
		// its session (stdin, then SIGTERM), not by ctx.
		cmd := exec.Command(c.srv.Command[0], c.srv.Command[1:]...)
		cmd.Stderr = &lineLog{log: c.log}
		if len(c.srv.Env) > 0 {
			cmd.Env = append(os.Environ(), c.srv.Env...)
		}
		t = &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	} else {
		t = &mcp.StreamableClientTransport{Endpoint: c.srv.URL, MaxRetries: -1,
			HTTPClient: &http.Client{Transport: headerTransport{headers: c.srv.Headers, base: http.DefaultTransport}}}
	}
	cl := mcp.NewClient(&mcp.Implementation{Name: "cairn", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case c.relist <- struct{}{}:
			default:
			}
		},
	})
	s, err := cl.Connect(ctx, t, nil)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("mcp server %q did not answer within %s", c.srv.Name, c.srv.StartTimeout)
		}
		return nil, fmt.Errorf("mcp server %q: connect: %w", c.srv.Name, err)
	}
	if err := c.list(ctx, s); err != nil {
		_ = s.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("mcp server %q did not list its tools within %s", c.srv.Name, c.srv.StartTimeout)
		}
		return nil, err
	}
	return s, nil
}

// list reads the server's tools into c.mu.tools.
func (c *client) list(ctx context.Context, s *mcp.ClientSession) error {
	var tools []tool.Tool
	var problems []string
	for t, err := range s.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("mcp server %q: list tools: %w", c.srv.Name, err)
		}
		mt, err := newTool(c, t)
		if err != nil {
			c.log.Error("mcp tool left out", "err", err)
			problems = append(problems, err.Error())
			continue
		}
		tools = append(tools, mt)
	}
	c.mu.Lock()
	c.mu.tools, c.mu.problems = tools, problems
	c.mu.Unlock()
	return nil
}

// run owns the connection until ctx is done: it connects (again) with a
// back-off, relists on list-changed, and waits for the session to end.
func (c *client) run(ctx context.Context, first *mcp.ClientSession) {
	backoff := 100 * time.Millisecond
	s := first
	for {
		if s == nil {
			var err error
			s, err = c.connect(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				c.setProblem(err.Error())
				c.log.Warn("mcp server unavailable; trying again", "err", err, "in", backoff)
				select {
				case <-ctx.Done():
					return
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, 10*time.Second)
				continue
			}
			c.log.Info("mcp server connected again")
		}
		c.setSession(s)
		c.changed()
		ended := make(chan struct{})
		go func() {
			_ = s.Wait()
			close(ended)
		}()
		up := time.Now()
	serve:
		for {
			select {
			case <-ctx.Done():
				_ = s.Close()
				<-ended
				c.setSession(nil)
				return
			case <-c.relist:
				lctx, cancel := context.WithTimeout(ctx, c.srv.StartTimeout)
				err := c.list(lctx, s)
				cancel()
				if err != nil {
					c.log.Warn("mcp relist failed", "err", err)
					continue
				}
				c.changed()
			case <-ended:
				// Close even so: it ends the session's goroutines
				// (the list-changed subscription's among them).
				_ = s.Close()
				break serve
			}
		}
		c.setSession(nil)
		c.log.Warn("mcp server session ended; connecting again")
		if time.Since(up) > time.Minute {
			backoff = 100 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
		s = nil
	}
}

func (c *client) setSession(s *mcp.ClientSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.session = s
	if s != nil {
		close(c.mu.up)
	} else {
		select {
		case <-c.mu.up:
			c.mu.up = make(chan struct{})
		default:
		}
	}
}

func (c *client) setProblem(p string) {
	c.mu.Lock()
	c.mu.problems = []string{p}
	c.mu.Unlock()
}

// session returns the current session, waiting for one until ctx is done.
func (c *client) session(ctx context.Context) (*mcp.ClientSession, error) {
	for {
		c.mu.Lock()
		s, up := c.mu.session, c.mu.up
		c.mu.Unlock()
		if s != nil {
			return s, nil
		}
		select {
		case <-up:
		case <-ctx.Done():
			return nil, errors.New("the server is not connected (starting or restarting)")
		}
	}
}

func (c *client) snapshot() (tools []tool.Tool, problems []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]tool.Tool(nil), c.mu.tools...), append([]string(nil), c.mu.problems...)
}

// headerTransport adds the configured headers to every request.
type headerTransport struct {
	headers map[string]secret.Secret
	base    http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range h.headers {
			r.Header.Set(k, v.Reveal())
		}
	}
	return h.base.RoundTrip(r)
}

// lineLog logs a stdio server's stderr, a line at a time, each cut at 1 KiB.
type lineLog struct {
	log *slog.Logger
	buf []byte
}

func (l *lineLog) Write(p []byte) (int, error) {
	for _, b := range p {
		if b == '\n' {
			l.flush()
			continue
		}
		if len(l.buf) < 1024 {
			l.buf = append(l.buf, b)
		}
	}
	return len(p), nil
}

func (l *lineLog) flush() {
	if len(l.buf) > 0 {
		l.log.Info("mcp server stderr", "line", string(l.buf))
		l.buf = l.buf[:0]
	}
}
