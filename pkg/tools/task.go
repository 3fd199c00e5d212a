package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// The task tool starts a sub-agent (DESIGN §13, docs/subagents.md): a child
// session of the same tenant that works on prompt and whose final answer is
// the call's result. Its calls never run in a toolrunner: the orchestrator
// parks them (agent.Config.Deferred) and creates the child, so Execute only
// says that it needs one.

const taskSchema = `{
  "type": "object",
  "properties": {
    "prompt": {"type": "string", "minLength": 1, "maxLength": 65536, "description": "The task for the sub-agent: everything it needs to know, since it does not see this conversation"},
    "model": {"type": "string", "description": "The sub-agent's model as provider/model (default: this session's)"},
    "tools": {"type": "array", "items": {"type": "string"}, "maxItems": 64, "description": "The sub-agent's tools, a subset of this session's (default: all of them)"},
    "skill": {"type": "string", "description": "A skill of the tenant the sub-agent runs with prompt as its text"}
  },
  "required": ["prompt"],
  "additionalProperties": false
}`

// TaskArgs are the arguments of a task call.
type TaskArgs struct {
	Prompt string   `json:"prompt"`
	Model  string   `json:"model,omitempty"`
	Tools  []string `json:"tools,omitempty"`
	Skill  string   `json:"skill,omitempty"`
}

// MaxTaskPrompt bounds a task's prompt in bytes.
const MaxTaskPrompt = 64 << 10

// ParseTaskArgs decodes and checks the arguments of a task call; errors
// name the argument.
func ParseTaskArgs(raw json.RawMessage) (TaskArgs, error) {
	var a TaskArgs
	if err := decodeArgs(events.TaskTool, raw, &a, []string{"prompt", "model", "tools", "skill"}, []string{"prompt"}); err != nil {
		return TaskArgs{}, err
	}
	switch {
	case strings.TrimSpace(a.Prompt) == "":
		return TaskArgs{}, argErr("prompt", "is empty (say what the sub-agent should do)")
	case len(a.Prompt) > MaxTaskPrompt:
		return TaskArgs{}, argErr("prompt", "is %d bytes (at most %d)", len(a.Prompt), MaxTaskPrompt)
	}
	if a.Model != "" {
		if err := events.ValidateModelRef("model", a.Model); err != nil {
			return TaskArgs{}, err
		}
	}
	for i, n := range a.Tools {
		if err := events.ValidateToolName("tools["+strconv.Itoa(i)+"]", n); err != nil {
			return TaskArgs{}, err
		}
	}
	if a.Tools != nil {
		if err := events.UniqueToolNames("tools", a.Tools); err != nil {
			return TaskArgs{}, err
		}
	}
	return a, nil
}

// ErrTaskNeedsOrchestrator is Execute's error: a task call is parked by the
// orchestrator, never executed.
var ErrTaskNeedsOrchestrator = errors.New("the task tool starts sub-agents only in a session an orchestrator runs")

// Task is the task tool's spec, for the orchestrator to offer.
type Task struct{}

// Spec describes the tool to the model.
func (Task) Spec() events.ToolSpec {
	s := spec(events.TaskTool, "Start a sub-agent: a new agent session that works on prompt on its own, with its own context, and whose final answer "+
		"is this call's result. Several task calls in one reply run in parallel. The sub-agent does not see this conversation: put everything it "+
		"needs in prompt.", taskSchema, false)
	return s
}

// Execute refuses: the orchestrator parks task calls instead.
func (Task) Execute(context.Context, tool.Call, func(tool.Result)) (tool.Result, error) {
	return tool.Result{}, ErrTaskNeedsOrchestrator
}
