package mcptool

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"

	"github.com/cairn-agents/cairn/pkg/tool"
)

// Set is the running connections to a toolrunner's MCP servers.
type Set struct {
	clients []*client
	wg      sync.WaitGroup
	cancel  context.CancelFunc

	mu struct {
		sync.Mutex
		watch func([]tool.Tool)
	}
	notify chan struct{}
}

// Start validates servers, connects to each (each bounded by its start
// timeout, all at once) and keeps them connected until ctx is done or
// [Set.Close]. A server that cannot be reached now is not an error: it is
// tried again in the background and its problem shows in [Set.Problems].
// Invalid configuration is an error, naming the server.
func Start(ctx context.Context, servers []Server, log *slog.Logger) (*Set, error) {
	seen := map[string]bool{}
	for i := range servers {
		if err := servers[i].Validate(); err != nil {
			return nil, err
		}
		if seen[servers[i].Name] {
			return nil, fmt.Errorf("mcp server %q is configured twice", servers[i].Name)
		}
		seen[servers[i].Name] = true
		servers[i] = servers[i].withDefaults()
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &Set{cancel: cancel, notify: make(chan struct{}, 1)}
	for _, srv := range servers {
		s.clients = append(s.clients, newClient(srv, log, s.changed))
	}
	first := make([]chan struct{}, len(s.clients))
	for i, c := range s.clients {
		first[i] = make(chan struct{})
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			sess, err := c.connect(ctx)
			if err != nil {
				log.Warn("mcp server not available at start", "mcpServer", c.srv.Name, "err", err)
				c.setProblem(err.Error())
			} else {
				t, _ := c.snapshot()
				log.Info("mcp server connected", "mcpServer", c.srv.Name, "tools", len(t))
			}
			close(first[i])
			c.run(ctx, sess)
		}()
	}
	for _, f := range first {
		<-f
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.deliver(ctx)
	}()
	return s, nil
}

// Tools returns the tools of every connected server, sorted by name.
func (s *Set) Tools() []tool.Tool {
	var out []tool.Tool
	for _, c := range s.clients {
		t, _ := c.snapshot()
		out = append(out, t...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Spec().Name < out[j].Spec().Name })
	return out
}

// Problems returns what is wrong now, one line each: servers not
// connected, tools left out.
func (s *Set) Problems() []string {
	var out []string
	for _, c := range s.clients {
		_, p := c.snapshot()
		out = append(out, p...)
	}
	return out
}

// Watch calls f with [Set.Tools] now and after every change (a server
// connected again, its list changed), one call at a time, from the set's
// own goroutine; f replaces any earlier watcher.
func (s *Set) Watch(f func([]tool.Tool)) {
	s.mu.Lock()
	s.mu.watch = f
	s.mu.Unlock()
	s.changed()
}

func (s *Set) changed() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

func (s *Set) deliver(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.notify:
			s.mu.Lock()
			f := s.mu.watch
			s.mu.Unlock()
			if f != nil {
				f(s.Tools())
			}
		}
	}
}

// Close disconnects every server (a stdio server's stdin is closed, then
// it is sent SIGTERM) and waits for the set's goroutines.
func (s *Set) Close() {
	s.cancel()
	s.wg.Wait()
}
