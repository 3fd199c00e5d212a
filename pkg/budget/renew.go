package budget

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Run renews the reservations and run slots this owner holds, every third
// of the hold TTL, until ctx ends. Without it they lapse after the TTL as
// a dead owner's do. Run what reserves (an orchestrator) runs it. It also
// watches the limits, so Limits reads no key while it runs (watch.go).
func (l *Ledger) Run(ctx context.Context) error {
	t := time.NewTicker(max(l.opts.HoldTTL/3, time.Millisecond))
	defer t.Stop()
	var updates <-chan jetstream.KeyValueEntry
	if w := l.watchLimits(ctx); w != nil {
		defer func() { _ = w.Stop() }() // ending anyway: nothing to do with its error
		updates = w.Updates()
	}
	defer l.stopWatching()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			l.renew(ctx)
		case e, ok := <-updates:
			if !ok {
				l.opts.Logger.Warn("budget: the watch of the limits ended; reading them on every call")
				l.stopWatching()
				updates = nil
				continue
			}
			l.applyLimit(e)
		}
	}
}

// renew extends every hold this owner has, key by key.
func (l *Ledger) renew(ctx context.Context) {
	l.mu.Lock()
	keys := make(map[string][]string, len(l.mu.held))
	for k, ids := range l.mu.held {
		for id := range ids {
			keys[k] = append(keys[k], id)
		}
	}
	l.mu.Unlock()
	for key, ids := range keys {
		err := l.update(ctx, key, func(data []byte) ([]byte, error) {
			var holds map[string]holdEntry
			var doc any
			if strings.HasPrefix(key, "runs.") {
				var r runsDoc
				if err := decode(key, data, &r); err != nil {
					return nil, err
				}
				holds, doc = r.Slots, &r
			} else {
				var d dayDoc
				if err := decode(key, data, &d); err != nil {
					return nil, err
				}
				holds, doc = d.Holds, &d
			}
			now := l.nowMs()
			changed := false
			for _, id := range ids {
				if h, ok := holds[id]; ok && h.Owner == l.opts.Owner {
					h.Expires = now + l.opts.HoldTTL.Milliseconds()
					holds[id] = h
					changed = true
				}
			}
			if !changed {
				return nil, errNoChange
			}
			prune(holds, now)
			return json.Marshal(doc)
		})
		if err != nil && ctx.Err() == nil {
			l.opts.Logger.Warn("budget: cannot renew reservations and run slots; they lapse after the hold TTL", "key", key, "err", err)
		}
	}
}
