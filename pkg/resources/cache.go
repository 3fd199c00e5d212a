package resources

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
)

// Cache is a copy of every tenant's resources kept by one KV watch on the
// bucket, for what runs per turn (the system prompt's skills list): a read
// of the bucket per turn costs tens of milliseconds, a read of the copy
// none. The copy lags a put by the watch's delivery; [Cache.Sync] waits
// until it has caught up with a version.
//
// A Cache is safe for concurrent use.
type Cache struct {
	mu struct {
		sync.Mutex
		byTenant map[string]map[Kind]map[string]Stored
		rev      uint64        // the highest revision the watch delivered
		changed  chan struct{} // closed and replaced on every change
	}
	subsMu sync.Mutex
	subs   []func(tenant string)
}

// WatchCache starts the copy of the store's bucket and returns once it
// holds every resource stored when it started. The watch runs until ctx
// ends.
func (s *Store) WatchCache(ctx context.Context) (*Cache, error) {
	w, err := s.kv.WatchAll(ctx)
	if err != nil {
		return nil, fmt.Errorf("resources: watch the bucket: %w", err)
	}
	c := &Cache{}
	c.mu.byTenant = map[string]map[Kind]map[string]Stored{}
	c.mu.changed = make(chan struct{})
	ready := make(chan struct{})
	go func() {
		defer func() { _ = w.Stop() }()
		initial := true
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-w.Updates():
				if !ok {
					return
				}
				if e == nil { // the end of what was stored at the start
					if initial {
						initial = false
						close(ready)
					}
					continue
				}
				c.apply(e)
			}
		}
	}()
	select {
	case <-ready:
		return c, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("resources: watch the bucket: %w", ctx.Err())
	}
}

// apply records one watched entry: a put replaces the resource, a delete
// or purge removes it. Keys that do not name a resource are ignored.
func (c *Cache) apply(e jetstream.KeyValueEntry) {
	tenant, rest, ok := strings.Cut(e.Key(), ".")
	if !ok {
		return
	}
	k, name, ok := strings.Cut(rest, ".")
	if !ok {
		return
	}
	kind := Kind(k)
	c.mu.Lock()
	byKind := c.mu.byTenant[tenant]
	if byKind == nil {
		byKind = map[Kind]map[string]Stored{}
		c.mu.byTenant[tenant] = byKind
	}
	if e.Operation() == jetstream.KeyValuePut {
		if st, err := decode(kind, name, e); err == nil && (kind == KindSkill || kind == KindTemplate || kind == KindSystem) {
			if byKind[kind] == nil {
				byKind[kind] = map[string]Stored{}
			}
			byKind[kind][name] = st
		}
	} else {
		delete(byKind[kind], name)
	}
	c.mu.rev = max(c.mu.rev, e.Revision())
	close(c.mu.changed)
	c.mu.changed = make(chan struct{})
	c.mu.Unlock()
	c.subsMu.Lock()
	subs := c.subs
	c.subsMu.Unlock()
	for _, f := range subs {
		f(tenant)
	}
}

// Get returns tenant's resource kind/name as the copy has it, with its
// text, or [ErrNotFound].
func (c *Cache) Get(tenant string, kind Kind, name string) (Stored, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.mu.byTenant[tenant][kind][name]
	if !ok {
		return Stored{}, fmt.Errorf("%w: no %s %q", ErrNotFound, kind, name)
	}
	return st, nil
}

// All returns tenant's resources of kind with their text, sorted by name.
func (c *Cache) All(tenant string, kind Kind) []Stored {
	c.mu.Lock()
	out := make([]Stored, 0, len(c.mu.byTenant[tenant][kind]))
	for _, st := range c.mu.byTenant[tenant][kind] {
		out = append(out, st)
	}
	c.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Sync waits until the copy has seen the bucket's revision rev (a put's
// version), or ctx ends.
func (c *Cache) Sync(ctx context.Context, rev uint64) error {
	for {
		c.mu.Lock()
		done, changed := c.mu.rev >= rev, c.mu.changed
		c.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("resources: waiting for version %d: %w", rev, ctx.Err())
		}
	}
}

// OnChange calls f with the tenant of every change the watch delivers
// after the initial copy, on the watch's goroutine: f must not block.
func (c *Cache) OnChange(f func(tenant string)) {
	c.subsMu.Lock()
	c.subs = append(c.subs, f)
	c.subsMu.Unlock()
}
