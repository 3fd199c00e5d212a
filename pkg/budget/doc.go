// Package budget keeps each tenant's budget (DESIGN §9): limits on tokens
// and cost per UTC day and on runs in progress, and the use that counts
// against them, in NATS KV buckets shared by every orchestrator and
// gateway, so the state survives restarts and is the same on every
// instance. docs/budgets.md describes it for operators.
//
// # Layout
//
// Two buckets, under the platform's prefix ([Buckets]):
//
//   - <prefix>_budgets: limits.<tenant> → [Limits] (no expiry);
//   - <prefix>_budget_use: day.<tenant>.<YYYY-MM-DD> → the day's settled
//     tokens, cost and calls, and the reservations of calls in flight;
//     runs.<tenant> → the run slots held. Keys expire 72 hours after their
//     last write: a day's key is kept a few days, history lives in the
//     projector's usage read model.
//
// # Concurrency
//
// Every change is a compare-and-set (a revision-checked KV Update) of one
// tenant's key, retried on conflict, so orchestrators on any number of
// machines admit calls one at a time per tenant and day. A model call is
// admitted while the day's settled use plus the reservations in flight is
// below each limit; it then reserves its estimate (the context's token
// estimate plus the request's max output tokens, priced from the model's
// prices) and settles its reply's usage, releasing the difference. So
// concurrent sessions of one tenant overshoot a limit by at most one call
// each: the last call each session had in flight when the limit was
// reached. A call that finds the budget spent only by reservations in
// flight waits (Options.Wait) for them to settle before it is refused.
//
// # Ownership and crashes
//
// A reservation and a run slot each carry their owner (the orchestrator
// instance) and an expiry (Options.HoldTTL ahead). The owner's [Ledger.Run]
// extends everything it holds every third of the TTL; any update of a key
// drops the holds whose expiry has passed, and reads do not count them. So
// the holds of an orchestrator that dies come back after at most the TTL
// (clock skew between machines adds to it), and a live one never loses
// its own. A reservation that cannot be settled (the ledger unreachable
// after the reply) expires the same way, and its call's use is not counted.
//
// # Errors
//
// Over budget is an [*Exceeded] (errors.Is with [ErrExceeded]); its message
// starts with "budget exceeded" and names the limit, the use and the
// tenant. [Meter] turns it into an llm error of kind quota, which the agent
// loop does not retry: the run ends with that assistant error entry. A
// ledger that cannot be reached is an llm error of kind retryable: the
// harness backs off and tries again, so an outage never admits a call
// unchecked.
package budget
