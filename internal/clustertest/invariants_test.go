//go:build cluster

package clustertest

import (
	"github.com/cairn-agents/cairn/internal/invariants"
	"github.com/cairn-agents/cairn/pkg/session"
)

// The invariants are internal/invariants', shared with the compose smoke
// test and the chaos driver.
var (
	idle  = invariants.Idle
	names = invariants.Names
)

// stats is what one session's log shows.
type stats struct {
	toolCalls, answered, interrupted, compactions int
}

// checkSession returns what is wrong with a settled session's log
// (invariants.Check).
func checkSession(sid string, recs []session.Record, acked []string) (stats, []string) {
	st, problems := invariants.Check(sid, recs, acked)
	return stats{toolCalls: st.ToolCalls, answered: st.Answered, interrupted: st.Interrupted, compactions: st.Compactions}, problems
}
