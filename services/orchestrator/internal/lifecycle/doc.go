// Package lifecycle is the state machine of a session's actor in the
// orchestrator: one [State] field, held by a [Machine], that names where
// the actor is in its life, and one transition table that says which moves
// are allowed. The actor changes state only through [Machine.To] and
// [Machine.Move], which refuse any move the table does not list with a
// [*TransitionError] naming both states.
//
// # States
//
//   - loading: the actor is starting. A handed-over actor waits first
//     (handover.go); then the session is read from the log, if it exists.
//   - idle: no run is in progress. The session may not exist yet (no log;
//     only create can change that).
//   - running: a run (a prompt, a summarised navigation, a compaction, a
//     recovery) goes on in the run goroutine while the actor keeps reading
//     its mailbox.
//   - settling: the run is returning: its agent_end went out, or the actor
//     aborted it. A command taken now waits for the run to return and finds
//     the session idle, as a client sending it upon agent_end expects.
//   - waiting: a run's batch waits for approvals (DESIGN §11): the run
//     returned with calls parked, and only their answers are missing. It
//     holds what idle holds (no run goroutine); it may shrink, and, when
//     no request of it expires, be evicted. The last answer starts the
//     run again (running) from the batch; a load or a restore of a
//     session whose log ends in such a batch lands here.
//   - shrunk: idle, holding only the session's stored records (shrink.go);
//     the next mailbox item restores it first.
//   - handing over: the actor can no longer serve the session (another
//     writer appended, or it could not be loaded or restored); it stops its
//     run and passes its unfinished commands to a new actor.
//   - evicted: the actor has left memory (idle timeout, EvictIdle,
//     shutdown, or after handing over). Its mailbox takes nothing more: the
//     next command starts a new actor, which loads the session again.
//
// # Diagram
//
//	          loaded                shrink
//	loading ─────────────▶ idle ───────────────▶ shrunk
//	   │                  │ ▲ ▲ ◀───────────────┘
//	   │         start a  │ │ │      restored
//	   │ recover     run  │ │ └─────────────────┐
//	   │                  ▼ │ returned          │ returned
//	   └─────────────▶ running ──────────────▶ settling
//	                    ▲ │   agent_end, abort
//	         last answer│ │ parked
//	                    │ ▼
//	                  waiting ◀──────────▶ shrunk (shrink, restored)
//	loading ──────────▶ waiting   (the log ends in a parked batch)
//
//	loading, idle, shrunk, running, settling, waiting ──▶ handing over ──▶ evicted
//	loading, idle, shrunk, running, settling, waiting ──────────────────▶ evicted
//
// # Transitions
//
// The table, one line per state with the states it may move to; a test
// checks that these lines are the table.
//
//	loading      → idle, running, waiting, handing over, evicted
//	idle         → running, shrunk, handing over, evicted
//	running      → settling, idle, waiting, handing over, evicted
//	settling     → idle, handing over, evicted
//	waiting      → running, shrunk, handing over, evicted
//	shrunk       → idle, waiting, handing over, evicted
//	handing over → evicted
//	evicted      →
//
// # Concurrency
//
// A Machine is safe for concurrent use; its state is one atomic word, so
// reading it costs what reading a flag did. The actor goroutine makes every
// move but one: the run goroutine moves running → settling when it
// publishes agent_end, with [Machine.Move], which does nothing if the
// state is no longer running. [Machine.To] moves from whatever the state is
// at that instant, so a race with that move lands on a legal transition or
// an error, never on a state the table does not allow.
package lifecycle
