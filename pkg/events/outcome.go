package events

import (
	"encoding/json"
)

// Outcome records what became of a command that no log entry can name:
//
//   - a refusal where the session has no log to hold a command_rejected
//     entry: a create refused (bad workspace, unknown model or tool), or
//     any command to a session that does not exist (Code and Reason say
//     what a command_rejected entry would);
//   - a command applied with nothing written (NoEffect): a navigation to
//     the active leaf, which, as in pi, changes nothing and writes nothing.
//
// It is the value of [OutcomeKey] in [Names.OutcomesBucket].
type Outcome struct {
	V         int    `json:"v"`
	SessionID string `json:"sessionId"`
	CommandID string `json:"commandId"`
	Type      string `json:"type,omitempty"` // the command's type, when it could be decoded
	// NoEffect: the command was applied and wrote nothing. Otherwise it
	// was refused, and Code and Reason say why.
	NoEffect  bool   `json:"noEffect,omitempty"`
	Code      string `json:"code,omitempty"`   // machine-readable, e.g. "invalid", "no_session"
	Reason    string `json:"reason,omitempty"` // for people: what was wrong
	Timestamp string `json:"timestamp"`        // RFC 3339, ms (see TimeFormat)
}

// MarshalJSON writes the outcome with its schema version.
func (r Outcome) MarshalJSON() ([]byte, error) {
	type plain Outcome
	if r.V == 0 {
		r.V = SchemaVersion
	}
	return json.Marshal(plain(r))
}

// DecodeOutcome decodes and validates an outcome: a refusal names its
// reason; an outcome with no effect names none.
func DecodeOutcome(data []byte) (Outcome, error) {
	type plain Outcome
	var r plain
	obj, err := readObject(data)
	if err != nil {
		return Outcome{}, err
	}
	defer obj.Release()
	if err := obj.DecodeKnown(&r); err != nil {
		return Outcome{}, fieldError(err)
	}
	if r.V != SchemaVersion {
		return Outcome{}, fieldErr("v", "unsupported schema version %d (this build reads %d)", r.V, SchemaVersion)
	}
	if err := validateID("sessionId", "session id", r.SessionID); err != nil {
		return Outcome{}, err
	}
	if err := validateID("commandId", "command id", r.CommandID); err != nil {
		return Outcome{}, err
	}
	switch {
	case !r.NoEffect && r.Reason == "":
		return Outcome{}, required("reason")
	case r.NoEffect && (r.Reason != "" || r.Code != ""):
		return Outcome{}, fieldErr("reason", "an outcome with no effect is no refusal and has no code or reason")
	}
	return Outcome(r), nil
}
