package budget

import "context"

// Today is a tenant's use on one UTC day, as the ledger has it now.
type Today struct {
	Day    string  `json:"day"`    // YYYY-MM-DD, UTC
	Tokens int64   `json:"tokens"` // settled
	Cost   float64 `json:"cost"`   // settled, USD
	Calls  int64   `json:"calls"`
	// Reserved by calls in flight, on top of the settled use.
	ReservedTokens int64   `json:"reservedTokens"`
	ReservedCost   float64 `json:"reservedCost"`
	// Runs in progress: the run slots held.
	Runs int64 `json:"runs"`
}

// Status is a tenant's budget with today's use.
type Status struct {
	Tenant string `json:"tenant"`
	Limits
	Today Today `json:"today"`
}

// Status returns tenant's limits and today's use; holds past their expiry
// do not count.
func (l *Ledger) Status(ctx context.Context, tenant string) (Status, error) {
	lim, err := l.Limits(ctx, tenant)
	if err != nil {
		return Status{}, err
	}
	t, err := l.today(ctx, tenant, "")
	if err != nil {
		return Status{}, err
	}
	return Status{Tenant: tenant, Limits: lim, Today: t}, nil
}

// today reads tenant's use today; the slot of session except, if any, is
// not counted among the runs.
func (l *Ledger) today(ctx context.Context, tenant, except string) (Today, error) {
	t := Today{Day: Day(l.opts.Now())}
	key := dayKey(tenant, t.Day)
	data, _, err := l.get(ctx, l.use, key)
	if err != nil {
		return t, err
	}
	var d dayDoc
	if err := decode(key, data, &d); err != nil {
		return t, err
	}
	now := l.nowMs()
	prune(d.Holds, now)
	t.Tokens, t.Cost, t.Calls = d.Tokens, d.Cost, d.Calls
	for _, h := range d.Holds {
		t.ReservedTokens += h.Tokens
		t.ReservedCost += h.Cost
	}
	rk := runsKey(tenant)
	data, _, err = l.get(ctx, l.use, rk)
	if err != nil {
		return t, err
	}
	var r runsDoc
	if err := decode(rk, data, &r); err != nil {
		return t, err
	}
	prune(r.Slots, now)
	t.Runs = int64(len(r.Slots))
	if _, ok := r.Slots[except]; ok && except != "" {
		t.Runs--
	}
	return t, nil
}

// Check reports whether a new run of session sid of tenant may start: an
// [*Exceeded] when the day's settled use has reached the tokens or cost
// limit, or every run slot is held by another session. Reservations in
// flight do not count here (they may settle lower); each model call checks
// them (Reserve).
func (l *Ledger) Check(ctx context.Context, tenant, sid string) error {
	lim, err := l.Limits(ctx, tenant)
	if err != nil || lim.IsZero() {
		return err
	}
	err = l.check(ctx, tenant, sid, lim)
	if fresh, ok := l.staleRefusal(ctx, tenant, lim, err); ok {
		return l.check(ctx, tenant, sid, fresh)
	}
	return err
}

func (l *Ledger) check(ctx context.Context, tenant, sid string, lim Limits) error {
	if lim.IsZero() {
		return nil
	}
	t, err := l.today(ctx, tenant, sid)
	if err != nil {
		return err
	}
	switch {
	case lim.TokensPerDay > 0 && t.Tokens >= lim.TokensPerDay:
		return &Exceeded{Tenant: tenant, Limit: LimitTokens, Max: float64(lim.TokensPerDay), Used: float64(t.Tokens)}
	case lim.CostPerDay > 0 && t.Cost >= lim.CostPerDay:
		return &Exceeded{Tenant: tenant, Limit: LimitCost, Max: lim.CostPerDay, Used: t.Cost}
	case lim.ConcurrentRuns > 0 && t.Runs >= lim.ConcurrentRuns:
		return &Exceeded{Tenant: tenant, Limit: LimitRuns, Max: float64(lim.ConcurrentRuns), Used: float64(t.Runs)}
	}
	return nil
}
