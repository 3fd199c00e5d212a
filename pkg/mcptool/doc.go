// Package mcptool serves the tools of MCP servers as Cairn tools, through
// the official Go SDK (github.com/modelcontextprotocol/go-sdk): a server is
// a command speaking MCP on stdin/stdout, or a streamable-HTTP endpoint.
// Each of its tools becomes the tool mcp__<server>__<tool> with the
// server's JSON schema for its arguments.
//
// # Lifecycle
//
// [Start] connects to every server once, bounded by its start timeout, and
// lists its tools; a server that does not answer in time does not stop
// the others. One goroutine per server then owns its connection: a stdio
// server is one long-lived process, started again (with a back-off) when
// it exits; an HTTP server is connected again when its session ends. On
// the server's tools/list_changed notification, and after every
// reconnection, the tools are listed again and the set's watcher is told.
//
// # Effects
//
// A server's effect class is the operator's: [Server.Idempotent] marks
// every one of its tools idempotent (run again after a crash) or not (an
// interrupted call becomes an error result, never a second run).
//
// # Errors
//
// A call never fails the caller: a server that is down, a protocol error,
// a time-out or an error reported by the tool are error results naming
// the server and what happened. Tool names that do not fit Cairn's tool
// names and input schemas that do not compile are left out, each logged
// and reported by [Set.Problems].
//
// # Security
//
// Header values (tokens) are never logged. A stdio server runs as a child
// of the toolrunner, outside the tool sandbox (docs/security.md); its
// environment is the operator's choice, not the calls'.
//
// # Concurrency
//
// A [Set] and its tools are safe for concurrent use; calls to one server
// run concurrently over its one connection.
package mcptool
