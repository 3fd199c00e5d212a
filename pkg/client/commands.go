package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/cairn-agents/cairn/pkg/events"
)

// Command is one command of DESIGN §4 as POST /v1/sessions/{id}/commands
// takes it. Build it with the constructors ([Prompt], [Steer], [Abort],
// [Navigate]...) and set the optional fields you need; Type decides which
// fields are sent. The gateway validates it and names the field it refuses.
type Command struct {
	// ID is the idempotency key: a command stored under an ID the stream
	// holds already is not stored again (Accepted.Duplicate). Empty: the
	// gateway generates one (Accepted.CommandID). Set it (events.NewID) to
	// retry a Send safely.
	ID string
	// Type is one of the events.Cmd* types.
	Type string

	// Text and Images: prompt, steer, follow_up.
	Text   string
	Images []events.Image
	// WhenBusy: prompt, skill and prompt_template; what to do when the agent is running
	// (events.BusyReject, the default; BusySteer; BusyFollowUp; BusyInterrupt).
	WhenBusy events.BusyPolicy

	// EntryID: navigate (nil: before the first entry) and label.
	EntryID *string
	// Summarize and Instructions: navigate (summarize the branch left);
	// Instructions also steer compact.
	Summarize    bool
	Instructions string

	// Model: set_model, as provider/model.
	Model string
	// Level: set_thinking_level (off, minimal, low, medium, high, xhigh).
	Level string
	// Tools: set_tools (an empty, non-nil slice: no tools).
	Tools []string
	// Label: label ("" clears the entry's label).
	Label string
	// Name: skill and prompt_template, the tenant's resource to run; Args:
	// prompt_template's arguments ($1, $@). A skill's arguments are Text.
	Name string
	Args []string

	// ToolCallID: approve and deny, the call answered; Arguments: approve's
	// edited arguments (a JSON object, checked against the tool's schema);
	// Reason: deny's (required).
	ToolCallID string
	Arguments  json.RawMessage
	Reason     string
	// Approvals: set_approvals, the session's approval policy.
	Approvals *events.Approvals
}

// Approve lets a parked tool call run; args, when not nil, replace its
// arguments (DESIGN §11).
func Approve(toolCallID string, args json.RawMessage) Command {
	return Command{Type: events.CmdApprove, ToolCallID: toolCallID, Arguments: args}
}

// Deny refuses a parked tool call; the model sees who refused it and why.
func Deny(toolCallID, reason string) Command {
	return Command{Type: events.CmdDeny, ToolCallID: toolCallID, Reason: reason}
}

// SetApprovals changes the session's approval policy.
func SetApprovals(p events.Approvals) Command {
	return Command{Type: events.CmdSetApprovals, Approvals: &p}
}

// Prompt is a user message that starts a run; see Command.WhenBusy for a
// session that is running.
func Prompt(text string) Command { return Command{Type: events.CmdPrompt, Text: text} }

// Steer is a message delivered to the running agent before its next model
// call.
func Steer(text string) Command { return Command{Type: events.CmdSteer, Text: text} }

// FollowUp is a message delivered when the agent would otherwise stop.
func FollowUp(text string) Command { return Command{Type: events.CmdFollowUp, Text: text} }

// Abort ends the running turn with an aborted assistant message and clears
// the steering and follow-up queues.
func Abort() Command { return Command{Type: events.CmdAbort} }

// Navigate moves the session's active leaf to entryID (nil: before the
// first entry), so the next prompt continues from there.
func Navigate(entryID *string) Command { return Command{Type: events.CmdNavigate, EntryID: entryID} }

// Compact summarizes the history now; instructions may be "".
func Compact(instructions string) Command {
	return Command{Type: events.CmdCompact, Instructions: instructions}
}

// SetModel changes the model (provider/model) from the next save point on.
func SetModel(model string) Command { return Command{Type: events.CmdSetModel, Model: model} }

// SetThinkingLevel changes the thinking level from the next save point on.
func SetThinkingLevel(level string) Command {
	return Command{Type: events.CmdSetThinkingLevel, Level: level}
}

// SetTools changes the tools the agent may use (none: an empty list).
func SetTools(tools ...string) Command {
	if tools == nil {
		tools = []string{}
	}
	return Command{Type: events.CmdSetTools, Tools: tools}
}

// Label sets the label of entry entryID ("" clears it).
func Label(entryID, label string) Command {
	return Command{Type: events.CmdLabel, EntryID: &entryID, Label: label}
}

// Skill runs the tenant's skill name as pi's /skill:NAME TEXT does (text
// may be ""); it takes a prompt's WhenBusy.
func Skill(name, text string) Command { return Command{Type: events.CmdSkill, Name: name, Text: text} }

// PromptTemplate runs the tenant's prompt template name with args; it
// takes a prompt's WhenBusy.
func PromptTemplate(name string, args ...string) Command {
	return Command{Type: events.CmdPromptTemplate, Name: name, Args: args}
}

// MarshalJSON writes the command as the API takes it: the fields set, and
// navigate's entryId always (null: before the first entry).
func (c Command) MarshalJSON() ([]byte, error) {
	m := map[string]any{"type": c.Type}
	set := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	set("id", c.ID)
	set("text", c.Text)
	set("whenBusy", string(c.WhenBusy))
	set("instructions", c.Instructions)
	set("model", c.Model)
	set("level", c.Level)
	set("label", c.Label)
	set("name", c.Name)
	if len(c.Args) > 0 {
		m["args"] = c.Args
	}
	set("toolCallId", c.ToolCallID)
	set("reason", c.Reason)
	if c.Arguments != nil {
		m["arguments"] = c.Arguments
	}
	if c.Approvals != nil {
		m["approvals"] = c.Approvals
	}
	if len(c.Images) > 0 {
		m["images"] = c.Images
	}
	if c.EntryID != nil || c.Type == events.CmdNavigate {
		m["entryId"] = c.EntryID
	}
	if c.Summarize {
		m["summarize"] = true
	}
	if c.Tools != nil {
		m["tools"] = c.Tools
	}
	return json.Marshal(m)
}

// Send stores cmd for session sid (POST /v1/sessions/{id}/commands). Without
// [WaitApplied] it returns once the command is durable (202): it will be
// applied, or the log will say why not ([Client.CommandStatus]).
func (c *Client) Send(ctx context.Context, sid string, cmd Command, opts ...SendOption) (Accepted, error) {
	path, err := sessionPath(sid, "/commands")
	if err != nil {
		return Accepted{}, err
	}
	var out Accepted
	status, err := c.doJSON(ctx, http.MethodPost, path, sendQuery(opts), cmd, &out)
	out.Applied = status == http.StatusOK
	return out, err
}

// Command states of [CommandStatus], read from the session log.
const (
	StatePending  = "pending"  // no entry names the command yet
	StateRejected = "rejected" // a command_rejected entry names it: Reason, Code
	StateApplied  = "applied"  // applied without starting a run (set_model, label...)
	StateRunning  = "running"  // its user message is in the log; the run has not settled
	StateSettled  = "settled"  // the run ended: Message, or Interrupted
)

// CommandStatus is where a command stands (GET
// /v1/sessions/{id}/commands/{commandId}), decided from the session log.
type CommandStatus struct {
	CommandID string `json:"commandId"`
	State     string `json:"state"`
	// EntryID is the first entry naming the command.
	EntryID string `json:"entryId,omitempty"`
	// Principal is who sent the command ("key:<id>", "oidc:<sub>"), as
	// that entry records it.
	Principal string `json:"principal,omitempty"`
	// Reason and Code explain a rejection.
	Reason string `json:"reason,omitempty"`
	Code   string `json:"code,omitempty"`
	// LastEntryID is the last entry of the log considered.
	LastEntryID string `json:"lastEntryId,omitempty"`
	// Message is the assistant message that ended a settled run (nil when
	// a crash interrupted it).
	Message *events.Message `json:"message,omitempty"`
	// Interrupted: a turn_interrupted entry ended the run.
	Interrupted bool `json:"interrupted,omitempty"`
	// EditorText: a navigation to a user or custom message; the leaf moved
	// to its parent and this is its text, to edit and send again.
	EditorText string `json:"editorText,omitempty"`
	// NoEffect: applied with nothing written (a navigation to the leaf).
	NoEffect bool `json:"noEffect,omitempty"`
}

// CommandStatus asks the log where command commandID of session sid
// stands: what a client asks when its event stream lost the end of a run.
func (c *Client) CommandStatus(ctx context.Context, sid, commandID string) (CommandStatus, error) {
	if err := events.ValidateEntryID(commandID); err != nil {
		return CommandStatus{}, fmt.Errorf("%w: command id: %v", ErrInvalid, err)
	}
	path, err := sessionPath(sid, "/commands/"+url.PathEscape(commandID))
	if err != nil {
		return CommandStatus{}, err
	}
	var out CommandStatus
	err = c.getJSON(ctx, path, nil, &out)
	return out, err
}
