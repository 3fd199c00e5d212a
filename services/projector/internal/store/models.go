package store

import "github.com/cairn-agents/cairn/pkg/events"

// Session statuses (DESIGN §4): what the API reports.
const (
	StatusIdle    = "idle"
	StatusRunning = "running"
	StatusWaiting = "waiting" // a batch waits for approvals or sub-agents (DESIGN §11, §13)
)

// Tool-call outcomes.
const (
	OutcomePending     = "pending"     // called, no result yet
	OutcomeOK          = "ok"          // a result with isError false
	OutcomeError       = "error"       // a result with isError true
	OutcomeInterrupted = "interrupted" // the turn ended (aborted, interrupted) before a result
)

// ValidOutcome reports whether s names an outcome.
func ValidOutcome(s string) bool {
	switch s {
	case OutcomePending, OutcomeOK, OutcomeError, OutcomeInterrupted:
		return true
	}
	return false
}

// Tokens counts tokens over many model calls.
type Tokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
	Total      int64 `json:"total"`
}

// Summary is the read model of one session (key s/<sid>).
type Summary struct {
	ID            string  `json:"id"`
	Status        string  `json:"status"`
	Leaf          *string `json:"leaf"`
	Model         string  `json:"model,omitempty"`
	ThinkingLevel string  `json:"thinkingLevel,omitempty"`
	Name          string  `json:"name,omitempty"`
	Workspace     string  `json:"workspace,omitempty"`
	ParentSession string  `json:"parentSession,omitempty"`
	// ParentToolCallID: a sub-agent's calling task call (ParentSession is
	// then its parent).
	ParentToolCallID string  `json:"parentToolCallId,omitempty"`
	Tenant           string  `json:"tenant,omitempty"`
	Entries          int64   `json:"entries"`
	Messages         int64   `json:"messages"`
	ToolCalls        int64   `json:"toolCalls"`
	Tokens           Tokens  `json:"tokens"`
	Cost             float64 `json:"cost"`
	// Subagents sums the sessions that descend from this one by task
	// calls, and what they used (subagents.go); absent when none did.
	Subagents    *SubagentUsage `json:"subagents,omitempty"`
	Created      string         `json:"created"`
	LastActivity string         `json:"lastActivity"`
	FirstSeq     uint64         `json:"firstSeq"`
	LastSeq      uint64         `json:"lastSeq"`
	// Pending lists tool calls of the current turn with no result yet.
	Pending []string `json:"pendingToolCalls,omitempty"`

	activityMs int64 // last activity in Unix ms, the index key's time
	// awaitCompaction: the run's last reply carries a compaction mark and
	// the compaction entry that settles it has not come yet. Stored with
	// the summary (storedSummary), not part of the API's answer.
	awaitCompaction bool
	// principal: who sent the last user message (its entry's principal),
	// to whom the tool calls after it are attributed. Stored with the
	// summary, not part of the API's answer.
	principal string
}

// storedSummary is a Summary as the store keeps it: with the state of the
// status rules the API does not show.
type storedSummary struct {
	*Summary
	AwaitCompaction bool   `json:"awaitCompaction,omitempty"`
	Principal       string `json:"principal,omitempty"`
}

// Node is one entry of a session tree. It is not stored: Tree derives it
// from the entry under e/<sid>/<seq>, so a rebuild gives the same nodes.
type Node struct {
	Seq       uint64  `json:"seq"`
	ID        string  `json:"id"`
	ParentID  *string `json:"parentId"`
	Type      string  `json:"type"`
	Role      string  `json:"role,omitempty"`
	Timestamp string  `json:"timestamp"`
	Label     string  `json:"label,omitempty"`
	// Preview is a short text of the entry (its first line of text, at most
	// PreviewRunes runes; the rule per type is in docs/read-models.md);
	// absent when the entry has none.
	Preview string `json:"preview,omitempty"`
	// Tools names the tools of the entry: the tool calls of an assistant
	// message in order, the tool of a toolResult, the active tools of an
	// active_tools_change.
	Tools []string `json:"tools,omitempty"`
}

// ToolCall is the audit record of one tool call (key tc/<sid>/<call id>).
type ToolCall struct {
	Tenant     string `json:"tenant"`
	Session    string `json:"session"`
	ID         string `json:"id"`
	Tool       string `json:"tool"`
	ArgsDigest string `json:"argsDigest"` // sha256 of the arguments as logged, "sha256:<hex>"
	Outcome    string `json:"outcome"`
	Started    string `json:"started"` // when the assistant message asked for it
	Ended      string `json:"ended,omitempty"`
	DurationMs int64  `json:"durationMs"`
	EntryID    string `json:"entryId"`                 // the assistant message
	ResultID   string `json:"resultEntryId,omitempty"` // the toolResult message
	Seq        uint64 `json:"seq"`
	// Principal is who sent the user message the call answers (the last
	// one before it): "key:<id>", "oidc:<sub>"; absent without one.
	Principal string `json:"principal,omitempty"`

	StartedMs int64 `json:"startedMs"`
}

// Usage sums the model calls of one model on one day (key u/<day>/<model>),
// or of one tenant's sessions (key ut/<tenant>/<day>/<model>, Tenant set).
type Usage struct {
	Tenant string  `json:"tenant,omitempty"` // "" in a total
	Day    string  `json:"day"`
	Model  string  `json:"model"`
	Calls  int64   `json:"calls"`
	Tokens Tokens  `json:"tokens"`
	Cost   float64 `json:"cost"`
	// ByPrincipal splits the row by who sent the user message each call
	// answers (calls after a message without a principal are in none).
	ByPrincipal map[string]*PrincipalUsage `json:"byPrincipal,omitempty"`
}

// PrincipalUsage is one principal's part of a usage row.
type PrincipalUsage struct {
	Calls  int64   `json:"calls"`
	Tokens Tokens  `json:"tokens"`
	Cost   float64 `json:"cost"`
}

// Bad records an entry the projector could not read (key bad/<seq>).
type Bad struct {
	Seq     uint64 `json:"seq"`
	Subject string `json:"subject"`
	Reason  string `json:"reason"`
}

// ref is the session s summarises.
func (s *Summary) ref() events.SessionRef { return events.SessionRef{Tenant: s.Tenant, ID: s.ID} }

// ref is the session c belongs to.
func (c *ToolCall) ref() events.SessionRef { return events.SessionRef{Tenant: c.Tenant, ID: c.Session} }
