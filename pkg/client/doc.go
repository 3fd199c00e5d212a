// Package client is the Go SDK of Cairn's HTTP API (the gateway's /v1
// routes, DESIGN §7): create sessions, send them commands, follow what
// their agents do as it happens, and read what the platform knows —
// summaries, logs, trees, contexts, exports, audits, usage, replays. The
// cairn CLI's client commands are built on it.
//
// A service that drives an agent:
//
//	cl, err := client.New("http://127.0.0.1:8080", client.WithToken(os.Getenv("CAIRN_TOKEN")))
//	if err != nil { ... }
//	s, err := cl.CreateSession(ctx, client.CreateSession{}, client.WaitApplied()) // the default model
//	if err != nil { ... }
//	// Open the event stream first: it sees every event of what is sent after.
//	stream, err := cl.FollowEvents(ctx, s.SessionID, client.FollowOptions{})
//	if err != nil { ... }
//	defer stream.Close()
//	if _, err := cl.Send(ctx, s.SessionID, client.Prompt("Summarize README.md")); err != nil { ... }
//	for {
//		ev, err := stream.Next()
//		if err != nil { ... }
//		if ev.Event.Type == events.EvMessageUpdate && ev.Event.Delta.Kind == events.DeltaText {
//			fmt.Print(ev.Event.Delta.Delta)
//		}
//		if ev.Event.Type == events.EvAgentEnd {
//			break
//		}
//	}
//	c, err := cl.Context(ctx, s.SessionID, "") // what the model sees next
//
// examples/sdk is that program in full, ending a run from the log when its
// last events are lost.
//
// Requests and responses are typed: [CreateSession], [Command] (built with
// [Prompt], [Steer], [FollowUp], [Abort], [Navigate], [Compact],
// [SetModel], [SetThinkingLevel], [SetTools], [Label]) and their answers;
// session entries, messages and live events are pkg/events' wire types.
// One file per API area: sessions.go, commands.go, events.go, log.go
// (entries, records, context, tree, export, import), replay.go, audit.go,
// usage.go, projector.go (the admin routes: online rebuild, digest),
// keys.go (API keys: create, list, revoke).
//
// # Authentication
//
// Every /v1 call needs a principal (docs/security.md): give the client a
// token with [WithToken], an API key (cairn_<id>_<secret>) or an OIDC JWT
// the gateway accepts. A call without one fails with ErrUnauthenticated;
// a role that may not do it with ErrForbidden.
//
// # Commands
//
// A command is durable once [Client.Send] (or [Client.CreateSession])
// returns: it will be applied, or the log will say why not. With
// [WaitApplied] the call returns once the orchestrator has applied it, or
// fails with an [*Error] of status 409 naming the reason it refused it.
// Give a command an ID (events.NewID) to retry a Send safely: a command id
// the stream holds already is not stored twice (Accepted.Duplicate).
//
// # Streaming
//
// [Client.FollowEvents] follows a session's live agent events over SSE.
// Each event's id is its sequence in the CAIRN_EVENTS stream. A dropped
// connection is reopened with Last-Event-ID after the last event
// delivered, for up to FollowOptions.ReconnectFor: the events stored
// meanwhile are replayed, none twice, none the stream still holds skipped,
// and a Live mark with Resumed set says when the stream is live again.
// Live events are a convenience that may be lost (the CAIRN_EVENTS stream
// keeps them for a short max age); the session log is the record:
// [Client.CommandStatus] says from the log whether the run a command
// started has settled, and docs/api/following-a-run.md says how a client
// combines the two.
//
// # Errors
//
// An error the gateway answered with is an [*Error] carrying its HTTP
// status, the API's code and message, and for a refused command the
// reason; read it with errors.As. Branch with errors.Is on the sentinels:
//
//	400  ErrInvalid          the message names the field
//	401  ErrUnauthenticated  no token, or one malformed, unknown, revoked or expired
//	403  ErrForbidden        the principal's role may not do this
//	404  ErrNotFound         no such session, entry or command
//	409  ErrRejected         a command refused under WaitApplied; an import of an id that exists
//	413  ErrTooLarge         a body over the gateway's limit
//	422  ErrCorrupt          the stored log does not decode
//	503  ErrUnavailable      a part of the platform is not reachable now
//	504  ErrTimeout          not applied within the wait; still stored, still applied
//
// A malformed session id is refused before any request, with an error
// that wraps ErrInvalid (and is not an *Error). A gateway that cannot be
// reached is an error wrapping the transport's. Cancelling a call's
// context abandons it and returns the context's error.
//
// # Concurrency
//
// A [Client] is safe for concurrent use by many goroutines, and holds no
// resources of its own besides its http.Client's idle connections. An
// [EventStream] is read by one goroutine (Next, LastID, Reconnects); Close
// may be called from any goroutine and ends a blocked Next.
//
// # Read models
//
// Sessions, trees, entries, tool-call audits and usage come from the
// projector's read models, which trail the log by the projector's lag:
// a session just created may answer ErrNotFound there for a moment.
// Contexts, exports, command states, records and replays are read from
// the log itself.
package client
