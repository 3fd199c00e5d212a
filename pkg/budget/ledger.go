package budget

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/jsretry"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/nats-io/nats.go/jetstream"
)

// UseMaxAge is how long a key of the use bucket outlives its last write.
const UseMaxAge = provision.BudgetUseMaxAge

// Options configure a Ledger. Zero values mean the defaults given.
type Options struct {
	// Names give the buckets' prefix; default "cairn".
	Names events.Names
	// Owner names this process on the reservations and slots it takes (an
	// orchestrator's instance name). Required to reserve; a gateway, which
	// only reads and sets limits, may leave it empty.
	Owner string
	// HoldTTL is how long a reservation or a slot of a dead owner counts;
	// default 30s. The owner's Run renews its own every HoldTTL/3.
	HoldTTL time.Duration
	// Wait bounds how long a call waits for reservations in flight to
	// settle before it is refused; default 60s.
	Wait time.Duration
	// Replicas of the buckets when Open creates them; default 1.
	Replicas int
	// Logger; default discards.
	Logger *slog.Logger
	// Now is the clock of holds and days; default time.Now.
	Now func() time.Time
}

// Ledger reads and changes the budgets and their use.
type Ledger struct {
	opts        Options
	limits, use jetstream.KeyValue
	mu          struct {
		sync.Mutex
		held map[string]map[string]bool // use key → ids this owner holds there
		// watching says limits answers Limits (watch.go): Run's watch has
		// delivered every stored value and still runs.
		watching bool
		limits   map[string]cachedLimit // tenant → limits
	}
}

// Open opens the buckets, creating them as [Buckets] configures them when
// they are missing (`cairn provision` creates them first in production).
// Cancelling ctx stops the attempt.
func Open(ctx context.Context, js jetstream.JetStream, opts Options) (*Ledger, error) {
	if opts.HoldTTL <= 0 {
		opts.HoldTTL = 30 * time.Second
	}
	if opts.Wait <= 0 {
		opts.Wait = time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	l := &Ledger{opts: opts}
	l.mu.held = map[string]map[string]bool{}
	l.mu.limits = map[string]cachedLimit{}
	cfgs := provision.BudgetBuckets(opts.Names, opts.Replicas)
	for i, dst := range []*jetstream.KeyValue{&l.limits, &l.use} {
		cfg := cfgs[i]
		err := jsretry.Do(ctx, func(ctx context.Context) error {
			kv, err := js.KeyValue(ctx, cfg.Bucket)
			if errors.Is(err, jetstream.ErrBucketNotFound) {
				kv, err = js.CreateKeyValue(ctx, cfg)
				if errors.Is(err, jetstream.ErrBucketExists) {
					kv, err = js.KeyValue(ctx, cfg.Bucket)
				}
			}
			*dst = kv
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("budget: bucket %s: %w", cfg.Bucket, err)
		}
	}
	return l, nil
}

func limitsKey(tenant string) string   { return "limits." + tenant }
func dayKey(tenant, day string) string { return "day." + tenant + "." + day }
func runsKey(tenant string) string     { return "runs." + tenant }

// Day returns the UTC day of t as the keys have it, YYYY-MM-DD.
func Day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// Limits returns tenant's budget; the zero Limits when none is set.
func (l *Ledger) Limits(ctx context.Context, tenant string) (Limits, error) {
	if lim, ok, err := l.cachedLimits(tenant); ok {
		return lim, err
	}
	return l.storedLimits(ctx, tenant)
}

// storedLimits reads tenant's limits from the bucket.
func (l *Ledger) storedLimits(ctx context.Context, tenant string) (Limits, error) {
	var lim Limits
	data, _, err := l.get(ctx, l.limits, limitsKey(tenant))
	if err != nil || data == nil {
		return lim, err
	}
	if err := json.Unmarshal(data, &lim); err != nil {
		return Limits{}, fmt.Errorf("budget: stored limits of tenant %s: %w", tenant, err)
	}
	return lim, nil
}

// SetLimits stores tenant's budget; it counts from the next call on
// (on other Ledgers, from the call after their watch delivers it; watch.go).
func (l *Ledger) SetLimits(ctx context.Context, tenant string, lim Limits) error {
	if err := ValidateTenant(tenant); err != nil {
		return err
	}
	if err := lim.Validate(); err != nil {
		return err
	}
	data, err := json.Marshal(lim)
	if err != nil {
		return err
	}
	err = jsretry.Do(ctx, func(ctx context.Context) error {
		_, err := l.limits.Put(ctx, limitsKey(tenant), data)
		return err
	})
	if err == nil {
		l.noteLimits(tenant, lim)
	}
	return err
}

// get returns a key's value and revision; nil and 0 when it is missing.
func (l *Ledger) get(ctx context.Context, kv jetstream.KeyValue, key string) ([]byte, uint64, error) {
	var data []byte
	var rev uint64
	err := jsretry.Do(ctx, func(ctx context.Context) error {
		e, err := kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			data, rev = nil, 0
			return nil
		}
		if err != nil {
			return err
		}
		data, rev = e.Value(), e.Revision()
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("budget: read %s: %w", key, err)
	}
	return data, rev, nil
}

// errNoChange from an update's f leaves the key as it is.
var errNoChange = errors.New("no change")

// update changes the use key with f, compare-and-set, until it wins: f
// gets the current value (nil if missing) and returns the new one, or an
// error (errNoChange: write nothing, report success).
func (l *Ledger) update(ctx context.Context, key string, f func(data []byte) ([]byte, error)) error {
	for {
		data, rev, err := l.get(ctx, l.use, key)
		if err != nil {
			return err
		}
		next, err := f(data)
		if errors.Is(err, errNoChange) {
			return nil
		}
		if err != nil {
			return err
		}
		err = jsretry.Do(ctx, func(ctx context.Context) error {
			if rev == 0 {
				_, err := l.use.Create(ctx, key, next)
				return err
			}
			_, err := l.use.Update(ctx, key, next, rev)
			return err
		})
		switch {
		case err == nil:
			return nil
		case errors.Is(err, jetstream.ErrKeyExists), errors.Is(err, jetstream.ErrKeyRevisionMismatch):
			continue // another writer won: read again
		default:
			return fmt.Errorf("budget: write %s: %w", key, err)
		}
	}
}

func (l *Ledger) nowMs() int64 { return l.opts.Now().UnixMilli() }

func (l *Ledger) hold(key, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.held[key] == nil {
		l.mu.held[key] = map[string]bool{}
	}
	l.mu.held[key][id] = true
}

func (l *Ledger) unhold(key, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.mu.held[key], id)
	if len(l.mu.held[key]) == 0 {
		delete(l.mu.held, key)
	}
}
