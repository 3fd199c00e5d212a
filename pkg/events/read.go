package events

import (
	"errors"

	"github.com/cairn-agents/cairn/pkg/events/internal/jsonx"
)

// The decoders read with jsonx (internal/jsonx): an entry point validates
// its whole input once, then every level reads its members from spans of
// it. Errors jsonx makes become FieldErrors here, at the package's edge.

// names are the names decoders read most (types, roles, stop reasons),
// returned without an allocation.
var names = jsonx.NewNames(
	EntrySession, EntryMessage, EntryModelChange, EntryThinkingLevelChange, EntryActiveToolsChange,
	EntryCompaction, EntryBranchSummary, EntryLabel, EntryCustom, EntryCustomMessage, EntrySessionInfo,
	EntryLeaf, EntryTurnInterrupted, EntryCommandRejected,
	EntryApprovalsChange, EntryApprovalRequested, EntryApprovalAnswered, EntryToolResultHeld, EntryTaskStarted,
	RoleUser, RoleAssistant, RoleToolResult, RoleCustom, RoleBranchSummary, RoleCompactionSummary, RoleBashExecution,
	BlockText, BlockImage, BlockThinking, BlockToolCall,
	string(StopEnd), string(StopLength), string(StopToolUse), string(StopError), string(StopAborted),
)

// fieldError returns err as a *FieldError if jsonx made it, else as it is.
func fieldError(err error) error {
	if err == nil {
		return nil // before e, which escapes: no allocation on success
	}
	var e *jsonx.Error
	if errors.As(err, &e) {
		return &FieldError{Field: e.Field, Problem: e.Problem}
	}
	return err
}

// readObject reads data, which must be valid JSON, all of it, holding an
// object. Release the reader when done.
func readObject(data []byte) (jsonx.Reader, error) {
	r, err := jsonx.ReadObject(data)
	return r, fieldError(err)
}

// readValidObject reads data, a span of a validated document, holding an
// object. Release the reader when done.
func readValidObject(data []byte, p jsonx.Path) (jsonx.Reader, error) {
	r, err := jsonx.ReadValidObject(data, p)
	return r, fieldError(err)
}

// indexObject validates data, all of it, holding an object. Release the
// index when done.
func indexObject(data []byte) (*jsonx.Index, error) {
	ix, err := jsonx.IndexObject(data)
	return ix, fieldError(err)
}

// readMessage reads member k holding one message; absent or null gives nil.
func readMessage(r *jsonx.Reader, k string, required bool) *Message {
	var m *Message
	r.Object(k, required, func(b []byte, p jsonx.Path) error {
		m = new(Message)
		return m.decode(b, p)
	})
	return m
}

// readMessages reads member k holding an array of messages; absent or null
// gives nil.
func readMessages(r *jsonx.Reader, k string) []Message {
	v, ok := r.Take(k)
	if !ok || jsonx.IsNull(v) {
		return nil
	}
	if v[0] != '[' {
		r.Fail(k, "must be an array of messages, got %s", jsonx.Kind(v))
		return nil
	}
	p := r.Path().Key(k)
	msgs := make([]Message, jsonx.Count(v, p))
	err := jsonx.Elements(v, p, func(i int, e []byte, p jsonx.Path) error { return msgs[i].decode(e, p) })
	if err != nil {
		r.SetErr(err)
		return nil
	}
	return msgs
}

// readBlocks reads member k holding an array of content blocks.
func readBlocks(r *jsonx.Reader, k string, required bool) []Block {
	v, ok := r.Take(k)
	if !ok || jsonx.IsNull(v) {
		if required {
			r.Fail(k, "is required")
		}
		return nil
	}
	if v[0] != '[' {
		r.Fail(k, "must be an array of content blocks, got %s", jsonx.Kind(v))
		return nil
	}
	p := r.Path().Key(k)
	blocks := make([]Block, jsonx.Count(v, p))
	err := jsonx.Elements(v, p, func(i int, e []byte, p jsonx.Path) error { return blocks[i].decode(e, p) })
	if err != nil {
		r.SetErr(err)
		return nil
	}
	return blocks
}
