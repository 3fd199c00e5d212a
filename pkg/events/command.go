package events

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cairn-agents/cairn/pkg/events/internal/jsonx"
)

// Command types (DESIGN §4).
const (
	CmdCreate           = "create"
	CmdPrompt           = "prompt"
	CmdSteer            = "steer"
	CmdFollowUp         = "follow_up"
	CmdAbort            = "abort"
	CmdNavigate         = "navigate"
	CmdCompact          = "compact"
	CmdSetModel         = "set_model"
	CmdSetThinkingLevel = "set_thinking_level"
	CmdSetTools         = "set_tools"
	CmdLabel            = "label"
	CmdSkill            = "skill"           // run a skill of the tenant (DESIGN §13)
	CmdPromptTemplate   = "prompt_template" // run a prompt template of the tenant
)

// BusyPolicy says what a prompt does when the session is running.
type BusyPolicy string

const (
	BusyReject    BusyPolicy = "reject"    // refuse the prompt (the default)
	BusySteer     BusyPolicy = "steer"     // deliver it as a steering message
	BusyFollowUp  BusyPolicy = "follow_up" // deliver it when the agent would stop
	BusyInterrupt BusyPolicy = "interrupt" // abort the run, then prompt
)

// Thinking levels.
var ThinkingLevels = []string{"off", "minimal", "low", "medium", "high", "xhigh"}

// Image is an image attached to a prompt: base64 data and its MIME type.
type Image struct {
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
}

// Command is a client command on cairn.cmd.<tenant>.<sid>. ID is the client's
// idempotency key and the message's Nats-Msg-Id.
type Command struct {
	V         int    `json:"v"`
	ID        string `json:"id"`
	Type      string `json:"type"`
	SessionID string `json:"sessionId"`

	// create
	Model        string   `json:"model,omitempty"` // also set_model: provider/model
	SystemPrompt string   `json:"systemPrompt,omitempty"`
	Tools        []string `json:"tools,omitempty"` // also set_tools
	Workspace    string   `json:"workspace,omitempty"`

	// prompt, steer, follow_up; skill (optional: the skill's arguments)
	Text     string     `json:"text,omitempty"`
	Images   []Image    `json:"images,omitempty"`
	WhenBusy BusyPolicy `json:"whenBusy,omitempty"` // also skill, prompt_template

	// skill, prompt_template: the resource's name; prompt_template: its
	// arguments ($1, $@ …)
	Name string   `json:"name,omitempty"`
	Args []string `json:"args,omitempty"`

	// navigate (EntryID nil = before the first entry), label
	EntryID      *string `json:"entryId,omitempty"`
	Summarize    bool    `json:"summarize,omitempty"`
	Instructions string  `json:"instructions,omitempty"` // also compact

	// set_thinking_level
	Level string `json:"level,omitempty"`

	// label ("" clears)
	Label string `json:"label,omitempty"`

	// create, set_approvals: the session's approval policy (DESIGN §11)
	Approvals *Approvals `json:"approvals,omitempty"`
	// approve, deny: the call answered; approve's edited arguments
	// (optional, checked against the tool's schema); deny's reason
	ToolCallID string          `json:"toolCallId,omitempty"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	Reason     string          `json:"reason,omitempty"`
	// create of a sub-agent (task.go): the parent session, its task call
	// and the child's depth. Only orchestrators send these; the gateway
	// refuses them.
	ParentSession    string `json:"parentSession,omitempty"`
	ParentToolCallID string `json:"parentToolCallId,omitempty"`
	TaskDepth        int    `json:"taskDepth,omitempty"`
	// task_result: the child session that settled (also ToolCallID, the
	// parent's task call). The parent reads the answer from the child's log.
	ChildSessionID string `json:"childSessionId,omitempty"`

	// Principal is who sent the command, as the gateway authenticated it:
	// "key:<key id>" for an API key, "oidc:<subject>" for an OIDC token.
	// The gateway sets it and refuses a client's; empty on commands from
	// before authentication (and from tools that write the stream directly).
	Principal string `json:"principal,omitempty"`

	Extra Extra `json:"-"`
}

// MarshalJSON writes the command with its extra fields; navigate always
// writes entryId, null included, and an empty but non-nil Tools is written
// as [] (set_tools with no tools).
func (c Command) MarshalJSON() ([]byte, error) {
	w := jsonx.Writer{B: make([]byte, 0, sizeHint(len(c.Text)+len(c.SystemPrompt)+len(c.Instructions)+extraSize(c.Extra))), InEnvelope: true}
	n := w.Begin()
	w.Int("v", int64(c.V))
	w.Str("id", c.ID)
	w.Str("type", c.Type)
	w.Str("sessionId", c.SessionID)
	w.OptStr("model", c.Model)
	w.OptStr("systemPrompt", c.SystemPrompt)
	if len(c.Tools) > 0 {
		w.Strs("tools", c.Tools)
	}
	w.OptStr("workspace", c.Workspace)
	w.OptStr("text", c.Text)
	if len(c.Images) > 0 {
		w.Key("images")
		w.B = append(w.B, '[')
		for i, im := range c.Images {
			if i > 0 {
				w.B = append(w.B, ',')
			}
			n := w.Begin()
			w.Str("data", im.Data)
			w.Str("mimeType", im.MimeType)
			w.End(n)
		}
		w.B = append(w.B, ']')
	}
	w.OptStr("whenBusy", string(c.WhenBusy))
	w.OptStr("name", c.Name)
	if len(c.Args) > 0 {
		w.Strs("args", c.Args)
	}
	if c.EntryID != nil {
		w.Str("entryId", *c.EntryID)
	}
	w.OptBool("summarize", c.Summarize)
	w.OptStr("instructions", c.Instructions)
	w.OptStr("level", c.Level)
	w.OptStr("label", c.Label)
	writeApprovals(&w, c.Approvals)
	w.OptStr("toolCallId", c.ToolCallID)
	w.OptRaw("arguments", c.Arguments)
	w.OptStr("reason", c.Reason)
	w.OptStr("parentSession", c.ParentSession)
	w.OptStr("parentToolCallId", c.ParentToolCallID)
	w.OptInt("taskDepth", int64(c.TaskDepth))
	w.OptStr("childSessionId", c.ChildSessionID)
	w.OptStr("principal", c.Principal)
	if c.Type == CmdNavigate && c.EntryID == nil {
		w.Key("entryId")
		w.B = append(w.B, "null"...)
	}
	if c.Tools != nil && len(c.Tools) == 0 {
		// An empty list (no tools at all) is not an absent one (the default).
		w.Key("tools")
		w.B = append(w.B, "[]"...)
	}
	// The extra members were appended to encoding/json's output, as they are.
	w.InEnvelope = false
	w.Extra(c.Extra)
	w.End(n)
	return w.Result()
}

// DecodeCommand decodes and validates a command. An absent "v" means the
// current schema version.
func DecodeCommand(data []byte) (Command, error) {
	r, err := readObject(data)
	if err != nil {
		return Command{}, err
	}
	defer r.Release()
	type plain Command
	var c plain
	entryIDPresent := r.Has("entryId")
	if err := r.DecodeKnown(&c); err != nil {
		return Command{}, fieldError(err)
	}
	cmd := Command(c)
	if string(cmd.Arguments) == "null" {
		cmd.Arguments = nil
	}
	cmd.Extra = r.Rest()
	if cmd.V == 0 {
		cmd.V = SchemaVersion
	}
	if err := cmd.validate(entryIDPresent); err != nil {
		return Command{}, err
	}
	return cmd, nil
}

// Validate checks the command's fields for its type.
func (c *Command) Validate() error {
	return c.validate(c.Type == CmdNavigate)
}

func (c *Command) validate(entryIDPresent bool) error {
	if c.V != SchemaVersion {
		return fieldErr("v", "unsupported schema version %d (this build reads %d)", c.V, SchemaVersion)
	}
	if err := validateID("id", "command id", c.ID); err != nil {
		return err
	}
	if c.SessionID != "" {
		if err := validateID("sessionId", "session id", c.SessionID); err != nil {
			return err
		}
	}
	if err := ValidatePrincipal("principal", c.Principal); err != nil {
		return err
	}
	switch c.Type {
	case CmdCreate:
		if c.Model != "" {
			if err := ValidateModelRef("model", c.Model); err != nil {
				return err
			}
		}
		if err := c.Approvals.Validate("approvals"); err != nil {
			return err
		}
		if c.ParentToolCallID != "" || c.ParentSession != "" || c.TaskDepth != 0 {
			if err := validateID("parentSession", "session id", c.ParentSession); err != nil {
				return err
			}
			if err := ValidateToolCallID("parentToolCallId", c.ParentToolCallID); err != nil {
				return err
			}
			if c.TaskDepth < 1 || c.TaskDepth > MaxTaskDepth {
				return fieldErr("taskDepth", "must be 1 to %d for a sub-agent, got %d", MaxTaskDepth, c.TaskDepth)
			}
		}
		return validateToolNames(c.Tools)
	case CmdTaskResult:
		if err := ValidateToolCallID("toolCallId", c.ToolCallID); err != nil {
			return err
		}
		return validateID("childSessionId", "session id", c.ChildSessionID)
	case CmdSetApprovals:
		if c.Approvals == nil {
			return required("approvals")
		}
		return c.Approvals.Validate("approvals")
	case CmdApprove, CmdDeny:
		if err := ValidateToolCallID("toolCallId", c.ToolCallID); err != nil {
			return err
		}
		if c.Type == CmdDeny {
			if len(c.Arguments) > 0 {
				return fieldErr("arguments", "only applies to approve")
			}
			if strings.TrimSpace(c.Reason) == "" {
				return fieldErr("reason", "is required (say why the call is denied)")
			}
			if len(c.Reason) > MaxReason {
				return fieldErr("reason", "is %d bytes (at most %d)", len(c.Reason), MaxReason)
			}
		} else if c.Reason != "" {
			return fieldErr("reason", "only applies to deny")
		}
		if len(c.Arguments) > 0 && (c.Arguments[0] != '{') {
			return fieldErr("arguments", "must be a JSON object")
		}
	case CmdPrompt, CmdSteer, CmdFollowUp:
		if strings.TrimSpace(c.Text) == "" && len(c.Images) == 0 {
			return fieldErr("text", "is required (a message needs text or images)")
		}
		for i, img := range c.Images {
			if img.Data == "" {
				return fieldErr("images["+itoa(i)+"].data", "is required")
			}
			if !strings.HasPrefix(img.MimeType, "image/") {
				return fieldErr("images["+itoa(i)+"].mimeType", "must be an image MIME type such as image/png, got %q", img.MimeType)
			}
		}
		if c.Type != CmdPrompt && c.WhenBusy != "" {
			return fieldErr("whenBusy", "only applies to prompt, skill and prompt_template")
		}
		return validateBusy(c.WhenBusy)
	case CmdSkill, CmdPromptTemplate:
		if err := validateResourceName(c.Name); err != nil {
			return err
		}
		if len(c.Images) > 0 {
			return fieldErr("images", "only apply to prompt, steer and follow_up")
		}
		if c.Type == CmdSkill && len(c.Args) > 0 {
			return fieldErr("args", "only applies to prompt_template (a skill takes text)")
		}
		if c.Type == CmdPromptTemplate && c.Text != "" {
			return fieldErr("text", "does not apply to prompt_template (its arguments are args)")
		}
		for i, a := range c.Args {
			if !utf8.ValidString(a) || strings.IndexByte(a, 0) >= 0 {
				return fieldErr("args["+itoa(i)+"]", "must be UTF-8 text without NUL bytes")
			}
		}
		return validateBusy(c.WhenBusy)
	case CmdAbort:
	case CmdNavigate:
		if !entryIDPresent {
			return fieldErr("entryId", "is required (null navigates before the first entry)")
		}
		if c.EntryID != nil {
			if err := validateID("entryId", "entry id", *c.EntryID); err != nil {
				return err
			}
		}
	case CmdCompact:
	case CmdSetModel:
		return ValidateModelRef("model", c.Model)
	case CmdSetThinkingLevel:
		if !slices.Contains(ThinkingLevels, c.Level) {
			return fieldErr("level", "unknown thinking level %q (want one of %s)", c.Level, strings.Join(ThinkingLevels, ", "))
		}
	case CmdSetTools:
		if c.Tools == nil {
			return required("tools")
		}
		return validateToolNames(c.Tools)
	case CmdLabel:
		if c.EntryID == nil {
			return required("entryId")
		}
		return validateID("entryId", "entry id", *c.EntryID)
	case "":
		return required("type")
	default:
		return fieldErr("type", "unknown command type %q", c.Type)
	}
	return nil
}

func validateBusy(p BusyPolicy) error {
	switch p {
	case "", BusyReject, BusySteer, BusyFollowUp, BusyInterrupt:
		return nil
	}
	return fieldErr("whenBusy", "unknown policy %q (want reject, steer, follow_up or interrupt)", p)
}

// MaxResourceNameLength bounds the name of a skill or template command
// (pkg/resources checks the name fully).
const MaxResourceNameLength = 64

// validateResourceName checks the name of a skill or template command as
// far as both kinds' rules agree: 1-64 characters of A-Z a-z 0-9 _ -.
func validateResourceName(name string) error {
	if name == "" {
		return required("name")
	}
	if len(name) > MaxResourceNameLength {
		return fieldErr("name", "exceeds %d characters (%d)", MaxResourceNameLength, len(name))
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fieldErr("name", "%q may only hold A-Z a-z 0-9 _ -", name)
		}
	}
	return nil
}

// ValidateToolCallID checks a tool call id as a client names it: 1–128
// characters of printable ASCII with no space (providers choose the ids).
func ValidateToolCallID(field, id string) error {
	if id == "" {
		return required(field)
	}
	if len(id) > 128 {
		return fieldErr(field, "must be at most 128 characters, got %d", len(id))
	}
	if problem := principalProblem(id); problem != "" {
		return fieldErr(field, "%s", problem)
	}
	return nil
}

// MaxReason bounds a deny's reason.
const MaxReason = 4096

// WhenBusyOrDefault returns the prompt's busy policy, reject if unset.
func (c *Command) WhenBusyOrDefault() BusyPolicy {
	if c.WhenBusy == "" {
		return BusyReject
	}
	return c.WhenBusy
}

// ValidateModelRef checks a model reference of the form provider/model.
func ValidateModelRef(field, ref string) error {
	provider, model, ok := strings.Cut(ref, "/")
	if !ok || provider == "" || model == "" {
		return fieldErr(field, "must be provider/model, got %q", ref)
	}
	return nil
}

// ValidateToolName checks a tool name: 1–64 characters of [A-Za-z0-9_-], so it
// can be a subject token and a provider's function name.
func ValidateToolName(field, name string) error { return validateID(field, "tool name", name) }

func validateToolNames(names []string) error {
	for i, n := range names {
		if err := ValidateToolName("tools["+itoa(i)+"]", n); err != nil {
			return err
		}
	}
	return nil
}

// ValidatePrincipal checks a principal id: empty, or at most 256
// characters of printable ASCII with no space.
func ValidatePrincipal(field, p string) error {
	if problem := principalProblem(p); problem != "" {
		return fieldErr(field, "%s", problem)
	}
	return nil
}

func principalProblem(p string) string {
	if len(p) > 256 {
		return "must be at most 256 characters, got " + itoa(len(p))
	}
	for i := 0; i < len(p); i++ {
		if p[i] < 0x21 || p[i] > 0x7e {
			return "has a character that is not printable ASCII (or a space) at " + itoa(i)
		}
	}
	return ""
}
