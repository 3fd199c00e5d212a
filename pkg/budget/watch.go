package budget

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// Limits are read on every model call. While [Ledger.Run] runs, a watch of
// the limits bucket keeps them in memory, so a call reads no key; a change
// made on this Ledger counts from its next call, one made elsewhere (the
// gateway's PUT) from the call after the watch delivers it, milliseconds
// later. Without Run, or after the watch fails, Limits reads the key. A
// refusal is confirmed by the key (staleRefusal): a limit raised elsewhere
// admits at once; one lowered elsewhere counts once the watch delivers it.

// cachedLimit is one tenant's limits as the watch last delivered them.
type cachedLimit struct {
	lim Limits
	err error // stored limits that do not decode: what a read would return
}

// watchLimits starts the watch of every tenant's limits; nil when it
// cannot (Limits then keeps reading keys).
func (l *Ledger) watchLimits(ctx context.Context) jetstream.KeyWatcher {
	w, err := l.limits.Watch(ctx, limitsKey("*"))
	if err != nil {
		l.opts.Logger.Warn("budget: cannot watch the limits; reading them on every call", "err", err)
		return nil
	}
	return w
}

// applyLimit records one update of the watch; nil marks the end of the
// stored values, from which the cache answers.
func (l *Ledger) applyLimit(e jetstream.KeyValueEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e == nil {
		l.mu.watching = true
		return
	}
	tenant := strings.TrimPrefix(e.Key(), limitsKey(""))
	if op := e.Operation(); op == jetstream.KeyValueDelete || op == jetstream.KeyValuePurge {
		delete(l.mu.limits, tenant)
		return
	}
	var c cachedLimit
	if err := json.Unmarshal(e.Value(), &c.lim); err != nil {
		c = cachedLimit{err: fmt.Errorf("budget: stored limits of tenant %s: %w", tenant, err)}
	}
	l.mu.limits[tenant] = c
}

// stopWatching makes Limits read keys again.
func (l *Ledger) stopWatching() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.watching = false
	clear(l.mu.limits)
}

// cachedLimits returns tenant's limits from the watch, false when the
// watch does not answer.
func (l *Ledger) cachedLimits(tenant string) (Limits, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.mu.watching {
		return Limits{}, false, nil
	}
	c := l.mu.limits[tenant]
	return c.lim, true, c.err
}

// staleRefusal returns the stored limits of tenant, true, when err refuses
// by lim taken from the watch and the stored limits differ: the watch may
// not have delivered a change made elsewhere yet (a tenant admin who raised
// the budget and prompts at once), and a refusal is confirmed by the key.
// The watch stays the cache: what it delivers next is newer than any read.
func (l *Ledger) staleRefusal(ctx context.Context, tenant string, lim Limits, err error) (Limits, bool) {
	var ex *Exceeded
	if !errors.As(err, &ex) {
		return Limits{}, false
	}
	if _, cached, _ := l.cachedLimits(tenant); !cached {
		return Limits{}, false // lim was read from the key already
	}
	stored, serr := l.storedLimits(ctx, tenant)
	if serr != nil || stored == lim {
		return Limits{}, false
	}
	return stored, true
}

// noteLimits records limits this Ledger stored, so its next call counts
// them whether or not the watch has delivered them yet.
func (l *Ledger) noteLimits(tenant string, lim Limits) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.watching {
		l.mu.limits[tenant] = cachedLimit{lim: lim}
	}
}
