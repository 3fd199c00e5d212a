package events

import (
	"encoding/json"
)

// Refusal records a command the orchestrator refused where no session log
// could hold a command_rejected entry: a create refused (bad workspace,
// unknown model or tool), or any command to a session that does not exist.
// It is the value of [RefusalKey] in [Names.RefusalsBucket] and says what
// a command_rejected entry says: the command, a reason code and the reason.
type Refusal struct {
	V         int    `json:"v"`
	SessionID string `json:"sessionId"`
	CommandID string `json:"commandId"`
	Type      string `json:"type,omitempty"` // the command's type, when it could be decoded
	Code      string `json:"code"`           // machine-readable, e.g. "invalid", "no_session"
	Reason    string `json:"reason"`         // for people: what was wrong
	Timestamp string `json:"timestamp"`      // RFC 3339, ms (see TimeFormat)
}

// MarshalJSON writes the refusal with its schema version.
func (r Refusal) MarshalJSON() ([]byte, error) {
	type plain Refusal
	if r.V == 0 {
		r.V = SchemaVersion
	}
	return json.Marshal(plain(r))
}

// DecodeRefusal decodes and validates a refusal.
func DecodeRefusal(data []byte) (Refusal, error) {
	type plain Refusal
	var r plain
	if err := json.Unmarshal(data, &r); err != nil {
		return Refusal{}, describeDecodeErr(err)
	}
	if r.V != SchemaVersion {
		return Refusal{}, fieldErr("v", "unsupported schema version %d (this build reads %d)", r.V, SchemaVersion)
	}
	if err := validateID("sessionId", "session id", r.SessionID); err != nil {
		return Refusal{}, err
	}
	if err := validateID("commandId", "command id", r.CommandID); err != nil {
		return Refusal{}, err
	}
	if r.Reason == "" {
		return Refusal{}, required("reason")
	}
	return Refusal(r), nil
}
