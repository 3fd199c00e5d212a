package budget

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// holdEntry is a reservation or a run slot: what it holds, its owner, and
// when it stops counting unless its owner renews it (Unix ms).
type holdEntry struct {
	Tokens  int64   `json:"tokens,omitempty"`
	Cost    float64 `json:"cost,omitempty"`
	Owner   string  `json:"owner"`
	Expires int64   `json:"expires"`
}

// dayDoc is the value of day.<tenant>.<day>.
type dayDoc struct {
	Tokens int64                `json:"tokens"`
	Cost   float64              `json:"cost"`
	Calls  int64                `json:"calls"`
	Holds  map[string]holdEntry `json:"holds,omitempty"` // by session id
}

// runsDoc is the value of runs.<tenant>.
type runsDoc struct {
	Slots map[string]holdEntry `json:"slots,omitempty"` // by session id
}

func decode(key string, data []byte, v any) error {
	if data == nil {
		return nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("budget: stored %s: %w", key, err)
	}
	return nil
}

// prune drops the holds that expired before now.
func prune(h map[string]holdEntry, now int64) {
	for id, e := range h {
		if e.Expires < now {
			delete(h, id)
		}
	}
}

// Amount is tokens and cost (USD).
type Amount struct {
	Tokens int64
	Cost   float64
}

// Reservation is what one call reserved, to be settled.
type Reservation struct {
	tenant, day, session string
	Amount
}

// Reserve admits one model call of session sid of tenant under lim and
// reserves est for it on today's key. Over a limit by settled use it
// returns an [*Exceeded] at once; over by reservations in flight it waits
// up to Options.Wait for them to settle first. Cancelling ctx stops the
// wait with ctx's error.
func (l *Ledger) Reserve(ctx context.Context, tenant, sid string, lim Limits, est Amount) (Reservation, error) {
	deadline := time.Now().Add(l.opts.Wait) // real time, whatever Options.Now says
	pause := 20 * time.Millisecond
	for {
		day := Day(l.opts.Now())
		key := dayKey(tenant, day)
		var over *Exceeded
		err := l.update(ctx, key, func(data []byte) ([]byte, error) {
			var d dayDoc
			if err := decode(key, data, &d); err != nil {
				return nil, err
			}
			now := l.nowMs()
			prune(d.Holds, now)
			delete(d.Holds, sid) // a hold of this session left by a crash: replaced
			var rt int64
			var rc float64
			for _, h := range d.Holds {
				rt += h.Tokens
				rc += h.Cost
			}
			over = nil
			if lim.TokensPerDay > 0 && d.Tokens+rt >= lim.TokensPerDay {
				over = &Exceeded{Tenant: tenant, Limit: LimitTokens, Max: float64(lim.TokensPerDay), Used: float64(d.Tokens), Reserved: float64(rt)}
			} else if lim.CostPerDay > 0 && d.Cost+rc >= lim.CostPerDay {
				over = &Exceeded{Tenant: tenant, Limit: LimitCost, Max: lim.CostPerDay, Used: d.Cost, Reserved: rc}
			}
			if over != nil {
				return nil, over
			}
			if d.Holds == nil {
				d.Holds = map[string]holdEntry{}
			}
			d.Holds[sid] = holdEntry{Tokens: est.Tokens, Cost: est.Cost, Owner: l.opts.Owner, Expires: now + l.opts.HoldTTL.Milliseconds()}
			return json.Marshal(d)
		})
		if err == nil {
			l.hold(key, sid)
			return Reservation{tenant: tenant, day: day, session: sid, Amount: est}, nil
		}
		if over == nil || over.Reserved == 0 || l.settledOver(over) || !time.Now().Before(deadline) {
			return Reservation{}, err
		}
		// Spent only counting calls in flight: wait for them to settle.
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return Reservation{}, ctx.Err()
		case <-t.C:
		}
		pause = min(2*pause, time.Second)
	}
}

// settledOver reports whether the settled use alone reaches the limit.
func (l *Ledger) settledOver(e *Exceeded) bool { return e.Used >= e.Max }

// Settle replaces r by the call's actual use and counts the call. It goes
// on after ctx is cancelled (a call that was made is counted); it fails
// only when the ledger cannot be reached.
func (l *Ledger) Settle(ctx context.Context, r Reservation, used Amount) error {
	key := dayKey(r.tenant, r.day)
	defer l.unhold(key, r.session)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return l.update(ctx, key, func(data []byte) ([]byte, error) {
		var d dayDoc
		if err := decode(key, data, &d); err != nil {
			return nil, err
		}
		prune(d.Holds, l.nowMs())
		if h, ok := d.Holds[r.session]; ok && h.Owner == l.opts.Owner {
			delete(d.Holds, r.session)
		}
		d.Tokens += used.Tokens
		d.Cost += used.Cost
		d.Calls++
		return json.Marshal(d)
	})
}

// Acquire gives session sid of tenant a run slot under lim; holding one
// already, it renews it. All slots held by other sessions: an [*Exceeded].
func (l *Ledger) Acquire(ctx context.Context, tenant, sid string, lim Limits) error {
	key := runsKey(tenant)
	err := l.update(ctx, key, func(data []byte) ([]byte, error) {
		var r runsDoc
		if err := decode(key, data, &r); err != nil {
			return nil, err
		}
		now := l.nowMs()
		prune(r.Slots, now)
		if _, mine := r.Slots[sid]; !mine && lim.ConcurrentRuns > 0 && int64(len(r.Slots)) >= lim.ConcurrentRuns {
			return nil, &Exceeded{Tenant: tenant, Limit: LimitRuns, Max: float64(lim.ConcurrentRuns), Used: float64(len(r.Slots))}
		}
		if r.Slots == nil {
			r.Slots = map[string]holdEntry{}
		}
		r.Slots[sid] = holdEntry{Owner: l.opts.Owner, Expires: now + l.opts.HoldTTL.Milliseconds()}
		return json.Marshal(r)
	})
	if err == nil {
		l.hold(key, sid)
	}
	return err
}

// Release gives back the run slot of session sid, if this owner holds it.
// It goes on after ctx is cancelled.
func (l *Ledger) Release(ctx context.Context, tenant, sid string) error {
	key := runsKey(tenant)
	defer l.unhold(key, sid)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return l.update(ctx, key, func(data []byte) ([]byte, error) {
		var r runsDoc
		if err := decode(key, data, &r); err != nil {
			return nil, err
		}
		if h, ok := r.Slots[sid]; !ok || h.Owner != l.opts.Owner {
			return nil, errNoChange
		}
		delete(r.Slots, sid)
		prune(r.Slots, l.nowMs())
		return json.Marshal(r)
	})
}
