package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/workspace"
)

// check refuses at once what the gateway can tell is wrong with a command
// that is well formed: a create's workspace outside the root (when the
// gateway knows the root) and a model the registry cannot resolve (when it
// has the registry). The rest is the orchestrator's to refuse, on the
// record.
func (g *Gateway) check(ref events.SessionRef, cmd *events.Command) error {
	if err := refuseTaskCommand(ref, cmd); err != nil {
		return err
	}
	switch cmd.Type {
	case events.CmdCreate:
		if cmd.Workspace != "" {
			if _, err := workspace.Rel(g.cfg.WorkspaceRoot, ref, cmd.Workspace); err != nil && !rootUnknown(g.cfg.WorkspaceRoot, cmd.Workspace) {
				return err
			}
		}
		if cmd.Model != "" {
			return g.checkModel(cmd.Model)
		}
	case events.CmdSetModel:
		return g.checkModel(cmd.Model)
	}
	return nil
}

// refuseTaskCommand refuses what only orchestrators may send for
// sub-agents (docs/subagents.md): a task_result (a client could otherwise
// wake a parent with a forged answer), a create naming a parent task, and
// a command id of the shape of the ones orchestrators derive for their
// children (a client could otherwise create a session in a child's place).
func refuseTaskCommand(ref events.SessionRef, cmd *events.Command) error {
	switch {
	case cmd.Type == events.CmdTaskResult:
		return &events.FieldError{Field: "type", Problem: "task_result is sent by the orchestrator running a sub-agent, not by clients"}
	case cmd.ParentSession != "" || cmd.ParentToolCallID != "" || cmd.TaskDepth != 0:
		return &events.FieldError{Field: "parentToolCallId", Problem: "a sub-agent is created by its parent's task call, not by clients"}
	case cmd.Type == events.CmdCreate && events.IsChildSessionID(ref.ID):
		return &events.FieldError{Field: "id", Problem: fmt.Sprintf("%q: session ids starting with \"sub-\" are reserved for sub-agents", ref.ID)}
	case events.IsTaskCommandID(cmd.ID):
		return &events.FieldError{Field: "id", Problem: fmt.Sprintf("%q: command ids starting with \"task-\" are reserved for the orchestrator's sub-agent commands", cmd.ID)}
	}
	return nil
}

// rootUnknown reports whether ws is an absolute workspace this gateway
// cannot check, having no root: the orchestrator decides.
func rootUnknown(root, ws string) bool {
	return root == "" && filepath.IsAbs(ws)
}

func (g *Gateway) checkModel(ref string) error {
	if g.cfg.Models == nil {
		return nil
	}
	if _, _, err := g.cfg.Models.Resolve(ref); err != nil {
		return &events.FieldError{Field: "model", Problem: fmt.Sprintf("%q cannot be used: %v", ref, err)}
	}
	return nil
}

// describeJSONErr names the field of a decoding error in the API's words.
func describeJSONErr(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("%s: must be %s, got %s", te.Field, jsonType(te.Type.Kind().String()), te.Value)
	}
	return err.Error()
}

func jsonType(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "slice", "array":
		return "an array"
	case "bool":
		return "a boolean"
	case "struct", "map":
		return "an object"
	}
	return "a " + kind
}
