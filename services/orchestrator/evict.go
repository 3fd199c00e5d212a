package orchestrator

import "github.com/cairn-agents/cairn/services/orchestrator/internal/lifecycle"

// EvictIdle asks every resident session that is idle to leave memory now,
// as its IdleTimeout would make it; a running session stays. It returns how
// many sessions were asked. An evicted session comes back from the log at
// its next command.
func (o *Orchestrator) EvictIdle() int {
	o.mu.Lock()
	actors := make([]*actor, 0, len(o.mu.actors))
	for _, a := range o.mu.actors {
		actors = append(actors, a)
	}
	o.mu.Unlock()
	n := 0
	for _, a := range actors {
		if a.enqueue(item{evict: true}) {
			n++
		}
	}
	return n
}

// Resident returns how many sessions are in memory and how many of them are
// shrunk (idle, held as their stored records only), as their actors' states
// say.
func (o *Orchestrator) Resident() (sessions, shrunk int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, a := range o.mu.actors {
		if a.is(lifecycle.Shrunk) {
			shrunk++
		}
	}
	return len(o.mu.actors), shrunk
}
