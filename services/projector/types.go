package projector

import "github.com/cairn-agents/cairn/services/projector/internal/store"

// The read models as queries return them (JSON field names are the API's).
type (
	Summary  = store.Summary
	Tokens   = store.Tokens
	Node     = store.Node
	TreeNode = store.TreeNode
	Tree     = store.Tree
	ToolCall = store.ToolCall
	Usage    = store.Usage
	Digest   = store.Digest
	Approval = store.Approval
)

// AllTenants as the Cairn-Tenant header of a list query (sessions, tool
// calls, approvals, usage) lists every tenant's rows, each naming its
// tenant, tenant by tenant in name order.
const AllTenants = store.AllTenants

// Session statuses and tool-call outcomes.
const (
	StatusIdle         = store.StatusIdle
	StatusRunning      = store.StatusRunning
	StatusWaiting      = store.StatusWaiting
	OutcomePending     = store.OutcomePending
	OutcomeOK          = store.OutcomeOK
	OutcomeError       = store.OutcomeError
	OutcomeInterrupted = store.OutcomeInterrupted
)
