package events

import (
	"encoding/json"
	"slices"
	"strings"
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

// Command is a client command on cairn.cmd.<sid>. ID is the client's
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

	// prompt, steer, follow_up
	Text     string     `json:"text,omitempty"`
	Images   []Image    `json:"images,omitempty"`
	WhenBusy BusyPolicy `json:"whenBusy,omitempty"`

	// navigate (EntryID nil = before the first entry), label
	EntryID      *string `json:"entryId,omitempty"`
	Summarize    bool    `json:"summarize,omitempty"`
	Instructions string  `json:"instructions,omitempty"` // also compact

	// set_thinking_level
	Level string `json:"level,omitempty"`

	// label ("" clears)
	Label string `json:"label,omitempty"`

	Extra Extra `json:"-"`
}

// MarshalJSON writes the command with its extra fields; navigate always
// writes entryId, null included, and an empty but non-nil Tools is written
// as [] (set_tools with no tools).
func (c Command) MarshalJSON() ([]byte, error) {
	w := jsonWriter{b: make([]byte, 0, sizeHint(len(c.Text)+len(c.SystemPrompt)+len(c.Instructions)+extraSize(c.Extra))), inEnvelope: true}
	n := w.begin()
	w.int("v", int64(c.V))
	w.str("id", c.ID)
	w.str("type", c.Type)
	w.str("sessionId", c.SessionID)
	w.optStr("model", c.Model)
	w.optStr("systemPrompt", c.SystemPrompt)
	if len(c.Tools) > 0 {
		w.strs("tools", c.Tools)
	}
	w.optStr("workspace", c.Workspace)
	w.optStr("text", c.Text)
	if len(c.Images) > 0 {
		w.key("images")
		w.b = append(w.b, '[')
		for i, im := range c.Images {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			n := w.begin()
			w.str("data", im.Data)
			w.str("mimeType", im.MimeType)
			w.end(n)
		}
		w.b = append(w.b, ']')
	}
	w.optStr("whenBusy", string(c.WhenBusy))
	if c.EntryID != nil {
		w.str("entryId", *c.EntryID)
	}
	w.optBool("summarize", c.Summarize)
	w.optStr("instructions", c.Instructions)
	w.optStr("level", c.Level)
	w.optStr("label", c.Label)
	if c.Type == CmdNavigate && c.EntryID == nil {
		w.key("entryId")
		w.b = append(w.b, "null"...)
	}
	if c.Tools != nil && len(c.Tools) == 0 {
		// An empty list (no tools at all) is not an absent one (the default).
		w.key("tools")
		w.b = append(w.b, "[]"...)
	}
	// The extra members were appended to encoding/json's output, as they are.
	w.inEnvelope = false
	w.extra(c.Extra)
	w.end(n)
	return w.result()
}

// DecodeCommand decodes and validates a command. An absent "v" means the
// current schema version.
func DecodeCommand(data []byte) (Command, error) {
	r, err := readObject(data)
	if err != nil {
		return Command{}, err
	}
	defer r.release()
	type plain Command
	var c plain
	entryIDPresent := r.has("entryId")
	if err := r.decodeKnown(&c); err != nil {
		return Command{}, err
	}
	cmd := Command(c)
	cmd.Extra = r.rest()
	if cmd.V == 0 {
		cmd.V = SchemaVersion
	}
	if err := cmd.validate(entryIDPresent); err != nil {
		return Command{}, err
	}
	return cmd, nil
}

func describeDecodeErr(err error) error {
	var te *json.UnmarshalTypeError
	if ok := asType(err, &te); ok {
		return fieldErr(te.Field, "must be %s, got %s", jsonTypeName(te.Type.Kind().String()), te.Value)
	}
	return fieldErr("", "invalid JSON: %v", err)
}

func jsonTypeName(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	case "ptr":
		return "a string or null"
	case "int", "int8", "int16", "int32", "int64":
		return "an integer"
	case "uint", "uint8", "uint16", "uint32", "uint64":
		return "a non-negative integer"
	default:
		return "a number"
	}
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
	switch c.Type {
	case CmdCreate:
		if c.Model != "" {
			if err := ValidateModelRef("model", c.Model); err != nil {
				return err
			}
		}
		return validateToolNames(c.Tools)
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
			return fieldErr("whenBusy", "only applies to prompt")
		}
		switch c.WhenBusy {
		case "", BusyReject, BusySteer, BusyFollowUp, BusyInterrupt:
		default:
			return fieldErr("whenBusy", "unknown policy %q (want reject, steer, follow_up or interrupt)", c.WhenBusy)
		}
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
