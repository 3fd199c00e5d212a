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
