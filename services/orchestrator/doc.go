// Package orchestrator consumes client commands, owns sessions, runs their
// agent loops and is the only writer of each session's log (DESIGN §1, §5).
// docs/orchestrator.md describes partitions, leases, recovery and idle
// sessions in full.
//
// # Ordering
//
// The commands of a partition are read in stream order; each session's
// commands are applied in that order by its actor, one goroutine per
// resident session. A session's live events are published in the order its
// harness emitted them.
//
// # Concurrency
//
// An actor owns its session; a run (a prompt, a navigation, a recovery)
// goes on in a second goroutine while the mailbox keeps being read, so
// steering, follow-ups and aborts reach a running agent. Where an actor is
// in its life (loading, idle, running, settling, waiting for approvals or
// sub-agents, shrunk, handing over, evicted) is one state with one transition table, package
// services/orchestrator/internal/lifecycle, whose doc draws the diagram. A
// command that arrives after the run's agent_end, or after the actor
// aborted the run (settling), waits for the run to return.
//
// # Durability
//
// Every entry is appended with the session's expected sequence and a
// deterministic id; a command is finished once an entry naming it is in the
// log, and the partition's checkpoint never passes an unfinished command. A
// run's running mark is stored before its command is finished.
//
// # Errors
//
// A command the orchestrator refuses is recorded as a command_rejected entry
// with a reason code; where the session has no log (a refused create, a
// command to a session that does not exist) the refusal is stored in the
// outcomes bucket instead, before the command is finished (outcomes.go). An append that loses the race with another writer
// (two instances holding one partition while leases are in doubt) ends the
// session's actor; the commands it had taken but not finished go, in stream
// order, to a new actor that reloads the session from the log, so a command
// the other writer applied is recognised and the others are applied once
// (handover.go). A session that cannot be loaded is handed over the same
// way, after a wait that grows with each handover in a row.
package orchestrator
