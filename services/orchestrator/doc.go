// Package orchestrator will consume client commands, own sessions, run their
// agent loops and be the only writer of each session's log (DESIGN §1, §5).
// It is not built yet: `cairn orchestrator` says so and exits 1.
package orchestrator
