package toolbus

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/jsretry"
	"github.com/cairn-agents/cairn/pkg/tool"
	"github.com/nats-io/nats.go/jetstream"
)

// SetTools makes tools the worker's tools whose names start with prefix,
// for tool sets that change while the worker runs (an MCP server's list
// changed): each is registered for the worker's pool and served from now
// on; a served tool under prefix that tools no longer has stops being
// served and, when the registry names this pool for it, is unregistered.
// A call already running keeps its tool. prefix must not be empty, and
// every tool's name must start with it.
func (s *Server) SetTools(ctx context.Context, prefix string, tools []tool.Tool) error {
	if prefix == "" {
		return fieldErr("prefix", "must not be empty")
	}
	specs := make([]events.ToolSpec, 0, len(tools))
	keep := make(map[string]tool.Tool, len(tools))
	for _, t := range tools {
		sp := t.Spec()
		if !strings.HasPrefix(sp.Name, prefix) {
			return fieldErr("tools", "tool %q does not start with %q", sp.Name, prefix)
		}
		specs = append(specs, sp)
		keep[sp.Name] = t
	}
	var gone []string
	s.mu.Lock()
	for name := range s.mu.tools {
		if _, ok := keep[name]; !ok && strings.HasPrefix(name, prefix) {
			delete(s.mu.tools, name)
			gone = append(gone, name)
		}
	}
	for name, t := range keep {
		s.mu.tools[name] = t
	}
	s.mu.Unlock()
	// Served before registered: a call routed by the new registration
	// finds its tool.
	if err := s.bus.register(ctx, s.w.Pool, s.w.Tenants, specs); err != nil {
		return err
	}
	for _, name := range gone {
		if err := s.bus.unregister(ctx, s.w.Pool, name); err != nil {
			return err
		}
	}
	return nil
}

// unregister deletes tool name from the registry if pool registered it.
func (b *Bus) unregister(ctx context.Context, pool, name string) error {
	kv, err := b.js.KeyValue(ctx, b.names.ToolsBucket())
	if err != nil {
		return bucketErr(b.names.ToolsBucket(), err)
	}
	return jsretry.Do(ctx, func(ctx context.Context) error {
		r, err := b.Lookup(ctx, name)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if r.Pool != pool {
			return nil
		}
		if err := kv.Delete(ctx, name); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
			return fmt.Errorf("toolbus: unregister %q: %w", name, err)
		}
		return nil
	})
}
