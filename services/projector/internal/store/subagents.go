package store

import "github.com/cairn-agents/cairn/pkg/events"

// Sub-agents (docs/subagents.md, docs/read-models.md). A sub-agent's
// session header names its parent; its summary shows the parent and the
// calling tool call, and every ancestor's summary counts it under
// "subagents": how many sessions descend from it and their tokens and
// cost. The child's entries come after its parent's header in the log, so
// the sums are the same after a rebuild.

// SubagentUsage is what a session's sub-agents, at any depth, used.
type SubagentUsage struct {
	Sessions int64   `json:"sessions"`
	Tokens   Tokens  `json:"tokens"`
	Cost     float64 `json:"cost"`
}

// maxAncestors bounds the walk up a chain of parents (a log written by
// hand could loop).
const maxAncestors = events.MaxTaskDepth

// ancestors calls f with the summary of every ancestor of s that the
// store knows, nearest first.
func (w *Writer) ancestors(s *Summary, f func(*Summary)) error {
	parent, n := s.ParentSession, 0
	for parent != "" && s.ParentToolCallID != "" && n < maxAncestors {
		ref := events.SessionRef{Tenant: s.Tenant, ID: parent}
		_, known := w.sums[ref]
		st, err := w.summary(ref)
		if err != nil {
			return err
		}
		if st.s.Entries == 0 { // no such session here: leave no trace of it
			if !known {
				delete(w.sums, ref)
			}
			return nil
		}
		f(st.s)
		s, parent, n = st.s, st.s.ParentSession, n+1
	}
	return nil
}

// subagentStarted counts a new sub-agent under its ancestors.
func (w *Writer) subagentStarted(s *Summary) error {
	return w.ancestors(s, func(a *Summary) {
		if a.Subagents == nil {
			a.Subagents = &SubagentUsage{}
		}
		a.Subagents.Sessions++
	})
}

// subagentUsage adds a sub-agent's reply's usage to its ancestors.
func (w *Writer) subagentUsage(s *Summary, u *events.Usage) error {
	if s.ParentToolCallID == "" {
		return nil
	}
	return w.ancestors(s, func(a *Summary) {
		if a.Subagents == nil {
			a.Subagents = &SubagentUsage{}
		}
		addTokens(&a.Subagents.Tokens, u)
		a.Subagents.Cost += u.Cost.Total
	})
}
