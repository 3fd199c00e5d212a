package gateway

import (
	"context"
	"errors"
	"net/http"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/nats-io/nats.go/jetstream"
)

// Command states of GET /v1/sessions/{id}/commands/{commandId}, decided
// from the session log alone.
const (
	// statePending: no entry names the command yet (stored and not yet
	// applied, queued behind a running agent, or never sent).
	statePending = "pending"
	// stateRejected: a command_rejected entry names it.
	stateRejected = "rejected"
	// stateApplied: an entry other than a user message names it (set_model,
	// label...): it started no run. Or no entry names it and the
	// orchestrator recorded it as applied with no effect (noEffect: a
	// navigation to the active leaf, which writes nothing).
	stateApplied = "applied"
	// stateRunning: its user message is in the log and the run it is part
	// of has not settled.
	stateRunning = "running"
	// stateSettled: after its user message the log shows the run ended: an
	// assistant message that asks for no tool, or a turn_interrupted entry.
	stateSettled = "settled"
)

// commandStatus is the answer of GET /v1/sessions/{id}/commands/{commandId}.
type commandStatus struct {
	CommandID string `json:"commandId"`
	State     string `json:"state"`
	// EntryID is the first entry naming the command.
	EntryID string `json:"entryId,omitempty"`
	// Reason and Code explain a rejection.
	Reason string `json:"reason,omitempty"`
	Code   string `json:"code,omitempty"`
	// LastEntryID is the log's last entry considered.
	LastEntryID string `json:"lastEntryId,omitempty"`
	// Message is the assistant message that ended a settled run (absent when
	// a turn_interrupted entry ended it).
	Message *events.Message `json:"message,omitempty"`
	// Interrupted: a turn_interrupted entry ended the run (a crash cut it).
	Interrupted bool `json:"interrupted,omitempty"`
	// EditorText: the navigation went to a user (or custom) message; the
	// leaf moved to its parent and its text is handed back for editing.
	EditorText string `json:"editorText,omitempty"`
	// NoEffect: applied, and nothing was written (a navigation to the
	// active leaf); no entry names the command.
	NoEffect bool `json:"noEffect,omitempty"`
}

// getCommandStatus answers whether the run a command started (or joined)
// has settled, from the log: the authoritative record, for clients whose
// live event stream lost the agent_end event.
func (g *Gateway) getCommandStatus(w http.ResponseWriter, r *http.Request) {
	cid := r.PathValue("commandId")
	// Command ids follow the same rule as entry ids (1–64 of A-Z a-z 0-9 _ -).
	if err := events.ValidateEntryID(cid); err != nil {
		writeError(w, http.StatusBadRequest, codeInvalid, "command id in path: "+err.Error())
		return
	}
	s, ok := g.loadSession(w, r)
	if !ok {
		return
	}
	st := runState(s.Entries(), cid)
	if st.State == statePending {
		applied, err := g.appliedWithNoEffect(r.Context(), s.ID(), cid)
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, codeUnavailable, "reading whether the command was applied with no effect: "+err.Error())
			return
		}
		if applied {
			st.State, st.NoEffect = stateApplied, true
		}
	}
	writeJSON(w, http.StatusOK, st)
}

// runState reads entries (the log in order) for the command cid.
//
// An assistant message that stopped with an error may be followed by an
// automatic retry: the log alone cannot tell, so it reads as settled. A
// follow-up message is appended right after the message it follows, so the
// window in which a run that goes on reads as settled is that short.
func runState(entries []events.Entry, cid string) commandStatus {
	st := commandStatus{CommandID: cid, State: statePending}
	at := -1
	for i := len(entries) - 1; i >= 0; i-- {
		if names(&entries[i], cid) {
			at = i
		}
	}
	if len(entries) > 0 {
		st.LastEntryID = entries[len(entries)-1].ID
	}
	if at < 0 {
		return st
	}
	first := &entries[at]
	st.EntryID = first.ID
	switch {
	case first.Type == events.EntryCommandRejected:
		st.State, st.Reason, st.Code = stateRejected, first.Reason, first.Code
		return st
	case first.Type != events.EntryMessage || first.Message == nil || first.Message.Role != events.RoleUser:
		st.State = stateApplied
		st.EditorText = selectedText(entries, first)
		return st
	}
	st.State = stateRunning
	for i := at + 1; i < len(entries); i++ {
		e := &entries[i]
		switch {
		case e.Type == events.EntryTurnInterrupted:
			st.State, st.Message, st.Interrupted = stateSettled, nil, true
		case e.Type != events.EntryMessage || e.Message == nil:
		case e.Message.Role == events.RoleAssistant && e.Message.StopReason != events.StopToolUse:
			st.State, st.Message, st.Interrupted = stateSettled, e.Message, false
		case e.Message.Role == events.RoleAssistant, e.Message.Role == events.RoleUser, e.Message.Role == events.RoleToolResult:
			st.State, st.Message, st.Interrupted = stateRunning, nil, false
		}
	}
	return st
}

// names reports whether e is an entry naming the command cid.
func names(e *events.Entry, cid string) bool {
	return e.CommandID == cid || (e.Message != nil && e.Message.CommandID == cid)
}

// selectedText is the editor text of a navigation whose leaf entry is e:
// the text of the user or custom message it selected, when the leaf went
// to that message's parent (events.Entry.LeafSelected); "" otherwise.
func selectedText(entries []events.Entry, e *events.Entry) string {
	id := e.LeafSelected()
	if id == "" {
		return ""
	}
	for i := range entries {
		if entries[i].ID == id {
			text, _ := entries[i].EditorText()
			return text
		}
	}
	return ""
}

// editorText is selectedText for an entry that just arrived: it reads the
// session log for the selected message ("" when e selected none, or the
// log cannot be read: the command status has it too).
func (g *Gateway) editorText(ctx context.Context, sid string, e *events.Entry) string {
	if e.LeafSelected() == "" || g.cfg.Log == nil {
		return ""
	}
	s, err := session.Load(ctx, g.cfg.Log, sid)
	if err != nil {
		g.cfg.Logger.Warn("cannot read the log for a navigation's editor text", "session", sid, "err", err)
		return ""
	}
	return selectedText(s.Entries(), e)
}

// appliedWithNoEffect reports whether the orchestrator recorded command cid
// of session sid as applied with nothing written (provision.NoEffectKey):
// the log cannot say so, as no entry names it.
func (g *Gateway) appliedWithNoEffect(ctx context.Context, sid, cid string) (bool, error) {
	kv, err := g.cfg.JetStream.KeyValue(ctx, provision.CheckpointsBucket(g.cfg.Names))
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return false, nil // no orchestrator ever ran: nothing was applied
	}
	if err != nil {
		return false, err
	}
	_, err = kv.Get(ctx, provision.NoEffectKey(sid, cid))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return false, nil
	}
	return err == nil, err
}

// watchNoEffect watches for the record that command cid of session sid
// was applied with no effect, for ?wait=applied; nil when it cannot (the
// wait then ends with its timeout if the command writes nothing).
func (g *Gateway) watchNoEffect(ctx context.Context, sid, cid string) jetstream.KeyWatcher {
	kv, err := g.cfg.JetStream.KeyValue(ctx, provision.CheckpointsBucket(g.cfg.Names))
	if err == nil {
		var w jetstream.KeyWatcher
		if w, err = kv.Watch(ctx, provision.NoEffectKey(sid, cid)); err == nil {
			return w
		}
	}
	g.cfg.Logger.Warn("cannot watch for a command applied with no effect", "session", sid, "command", cid, "err", err)
	return nil
}
