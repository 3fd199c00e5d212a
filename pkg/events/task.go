package events

import "strings"

// Sub-agents (DESIGN §13, docs/subagents.md). A call of the built-in task
// tool parks its batch as an approval does: a task_started entry names the
// child session, whose id [ChildSessionID] derives from the parent and the
// call, so a start retried after a crash creates the child once. The
// child's session header records its parent (ParentSession), the calling
// tool call (ParentToolCallID) and its depth (TaskDepth, 1 for a child of
// a top-level session). When the child's run settles, the orchestrator
// that owns the child sends the parent a task_result command; the parent
// reads the child's answer from the child's log (never from the command)
// and holds it as the call's result in a tool_result_held entry naming the
// command. Once every parked call of the batch is answered the batch's
// results are recorded in the model's order.
const (
	// EntryTaskStarted parks one task call until its child settles.
	EntryTaskStarted = "task_started"
	// CmdTaskResult tells a parent that the child of one of its task calls
	// settled. Only orchestrators send it; the gateway refuses it.
	CmdTaskResult = "task_result"
	// TaskTool is the name of the built-in tool that starts a sub-agent.
	TaskTool = "task"
)

// MaxTaskDepth bounds a session header's taskDepth; a tenant's depth
// limit cannot go past it.
const MaxTaskDepth = 16

// ChildSessionID is the id of the child session that tool call toolCallID
// of session parent starts: "sub-" and 16 hex characters, the same for the
// same parent and call.
func ChildSessionID(parent, toolCallID string) string {
	return "sub-" + DeriveID("task", parent, toolCallID)
}

// TaskCommandID is the deterministic id of a command the orchestrator
// sends on a task's behalf: kind is create, prompt, abort or result; key
// distinguishes repeated sends (the abort command's id), "" for one-off.
func TaskCommandID(kind, child, key string) string {
	id := "task-" + kind + "-" + child
	if key != "" {
		id += "-" + DeriveID(key)
	}
	return id
}

// IsTaskCommandID reports whether id has the shape of a task command id.
func IsTaskCommandID(id string) bool { return strings.HasPrefix(id, "task-") }

// IsChildSessionID reports whether id has the shape of a sub-agent's
// session id.
func IsChildSessionID(id string) bool { return strings.HasPrefix(id, "sub-") }
