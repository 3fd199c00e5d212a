package budget

import "context"

// RenewNow runs one renewal, as Run does every third of the hold TTL.
func (l *Ledger) RenewNow(ctx context.Context) { l.renew(ctx) }

// Watching reports whether Run's watch answers Limits.
func (l *Ledger) Watching() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.watching
}

// PretendWatching makes Limits answer from lims as if Run's watch had
// delivered them, with no watch to bring anything newer.
func (l *Ledger) PretendWatching(lims map[string]Limits) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.watching = true
	for t, lim := range lims {
		l.mu.limits[t] = cachedLimit{lim: lim}
	}
}
