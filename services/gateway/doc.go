// Package gateway serves Cairn's HTTP API (DESIGN §7): it validates client
// commands and appends them to CAIRN_COMMANDS, streams live agent events over
// SSE, and answers read queries from the projector's read models.
//
// # Durability
//
// A command is acknowledged (202) only after the stream has stored it: from
// then on it will be applied, or the log will say why not. The command id is
// the message's Nats-Msg-Id, so a client retrying a request with the same id
// within the stream's duplicate window creates no second command.
//
// # Ordering
//
// Commands of one session are stored in the order the gateway received their
// acknowledgements. Live events of one session are delivered in stream order;
// each SSE event's id is its stream sequence, and a client reconnecting with
// Last-Event-ID receives every event after it that the stream still holds.
// A stream that does not resume first names its position (an id-only
// field), so a client cut off before its first event resumes without a gap.
//
// Live events may be lost; the log is the record. GET
// /v1/sessions/{id}/commands/{commandId} reads it to say whether a command
// is pending, rejected, applied, or part of a run that is running or has
// settled. A command no log entry can name — refused where the session has
// no log (a refused create, a command to a session that does not exist),
// or applied with nothing written (a navigation to the active leaf) — has
// its outcome recorded in the outcomes bucket instead; the status route and
// ?wait=applied read it there (outcomes.go), so no command goes unanswered.
//
// # Authentication
//
// Every /v1 route and SSE stream needs a principal, an API key or an OIDC
// JWT sent as "Authorization: Bearer <token>" (auth.go, keys.go, oidc.go),
// and a role at least the one routeRoles gives the route (roles.go; the
// table is docs/security.md). API keys live hashed in the keys bucket; each
// gateway watches it, so a key revoked on one fails on all within moments.
// The principal of a request rides on its context ([PrincipalFrom]) and on
// every command it stores (events.Command.Principal). /healthz, /readyz and
// /metrics are open. The web console (internal/console, served at "/")
// logs in with an API key kept in an HttpOnly cookie; /v1 accepts that
// cookie in place of the header, and an unsafe request so authenticated
// must pass the console's CSRF checks (origin, and a token bound to the
// cookie), else 403.
//
// # Tracing
//
// Every route runs under a server span named after its pattern, continuing
// a caller's W3C trace context; a command carries the span to the
// orchestrator in its message headers.
//
// # Errors
//
// Every error is JSON {"error":{"code","message"}} with a fitting status:
// 401 unauthenticated for missing or refused credentials (the message names
// the class of problem, never the token), 403 forbidden for a role below
// the route's, 400 for invalid input (the message names the field): malformed JSON,
// ids, fields of the wrong type, and, when Config gives the gateway the
// workspace root and the model registry, a workspace outside the root or a
// model that cannot be resolved; 404; 409 for a command the orchestrator
// refused (with ?wait=applied); 413 for a body over the limit; 422 (code corrupt) when a
// session's stored log does not decode; 503 when a
// dependency is unavailable; 504 when waiting timed out.
//
// # Concurrency
//
// A Gateway serves requests concurrently; Run owns its goroutines and returns
// after they have stopped.
package gateway
