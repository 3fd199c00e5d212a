package budget

import "context"

// RenewNow runs one renewal, as Run does every third of the hold TTL.
func (l *Ledger) RenewNow(ctx context.Context) { l.renew(ctx) }
