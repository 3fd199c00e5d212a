package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
)

// Command states of GET /v1/sessions/{id}/commands/{commandId}, decided
// from the session log alone.
const (
	// statePending: no entry names the command yet (stored and not yet
	// applied, queued behind a running agent, or never sent).
	statePending = "pending"
	// stateRejected: a command_rejected entry names it, or, where the
	// session has no log (a refused create), the outcomes bucket holds it.
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
	// Principal is who sent the command ("key:<id>", "oidc:<sub>"), as
	// that entry records it.
	Principal string `json:"principal,omitempty"`
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
	sid, ok := sessionRef(w, r)
	if !ok {
		return
	}
	if g.cfg.Log == nil {
		writeError(w, http.StatusServiceUnavailable, codeUnavailable, "the session log is not configured on this gateway")
		return
	}
	s, err := session.Load(r.Context(), g.cfg.Log, sid)
	if err != nil && !errors.Is(err, session.ErrNotFound) {
		writeError(w, http.StatusServiceUnavailable, codeUnavailable, "reading the log: "+err.Error())
		return
	}
	st := commandStatus{CommandID: cid, State: statePending}
	if s != nil {
		st = runState(s.Entries(), cid)
	}
	if st.State == statePending {
		// Not named in the log: refused where there was no log to record
		// it, or applied with nothing written (outcomes.go)?
		oc, err := g.lookupOutcome(r.Context(), sid, cid)
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, codeUnavailable, "reading the outcomes: "+err.Error())
			return
		}
		switch {
		case oc != nil && oc.NoEffect:
			st.State, st.NoEffect = stateApplied, true
		case oc != nil:
			st.State, st.Reason, st.Code = stateRejected, oc.Reason, oc.Code
		case s == nil:
			writeError(w, http.StatusNotFound, codeNotFound, fmt.Sprintf("no session %q", sid.ID))
			return
		}
	}
	writeJSON(w, http.StatusOK, st)
}

// runState reads entries (the log in order) for the command cid.
//
// An assistant message that stopped with an error and carries a retry mark
// did not end the run: the harness backs off (or compacts) and calls the
// model again. A reply with a compaction mark did not end it either: the
// run settles, with that reply, on the compaction entry that follows. A follow-up message is appended right after the
// message it follows, so the window in which a run that goes on reads as
// settled is that short.
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
	st.EntryID, st.Principal = first.ID, first.Principal
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
	var reply *events.Message // a reply with a compaction mark, its compaction owed
	for i := at + 1; i < len(entries); i++ {
		e := &entries[i]
		if e.Type == events.EntryMessage || e.Type == events.EntryTurnInterrupted {
			reply = nil // a later message, or a closing entry, ends the wait
		}
		switch {
		case e.Type == events.EntryTurnInterrupted:
			st.State, st.Message, st.Interrupted = stateSettled, nil, true
		case e.Type == events.EntryCompaction && reply != nil:
			st.State, st.Message, st.Interrupted = stateSettled, reply, false
			reply = nil
		case e.Type != events.EntryMessage || e.Message == nil:
		case e.Retry != nil && e.Retry.Code == events.RetryCompaction:
			// a reply the harness compacts after: settled with the compaction
			st.State, st.Message, st.Interrupted = stateRunning, nil, false
			reply = e.Message
		case e.Retry != nil: // an error the harness retries: the run goes on
			st.State, st.Message, st.Interrupted = stateRunning, nil, false
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
func (g *Gateway) editorText(ctx context.Context, sid events.SessionRef, e *events.Entry) string {
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
