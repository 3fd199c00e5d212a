package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
)

// project applies one decoded entry of session sid. The rules are those of
// docs/read-models.md; keep the two in step.
// ms is the entry's timestamp in Unix ms.
func (w *Writer) project(seq uint64, sid events.SessionRef, e *events.Entry, data []byte, ms int64) error {
	st, err := w.summary(sid)
	if err != nil {
		return err
	}
	s := st.s
	if s.Entries == 0 {
		s.FirstSeq = seq
		s.Created = e.Timestamp
	}
	s.Entries++
	s.LastSeq = seq
	s.LastActivity = e.Timestamp
	s.activityMs = ms
	// Keys and values are built in w.buf: Set copies them into the batch.
	w.buf = appendHex16(append(append(append(append(append(w.buf[:0], pEntry...), sid.Tenant...), '.'), sid.ID...), '/'), seq)
	if err := w.b.Set(w.buf, data, nil); err != nil {
		return err
	}

	if e.Type == events.EntrySession {
		s.Created = e.Timestamp
		s.Model = e.Model
		s.ThinkingLevel = e.ThinkingLevel
		s.Workspace = e.Cwd
		s.ParentSession = e.ParentSession
		s.ParentToolCallID = e.ParentToolCallID
		// s.Tenant is the subject's: the session's keys are under it, and
		// a header written before tenants records none (the default's).
		return w.subagentStarted(s)
	}

	// Every other entry is a node of the tree; the tree itself is read from
	// e/ when asked for (tree.go), so that the entry is stored once.
	w.buf = append(append(append(append(append(append(w.buf[:0], pEntryID...), sid.Tenant...), '.'), sid.ID...), '/'), e.ID...)
	k := len(w.buf)
	w.buf = appendHex16(w.buf, seq)
	if err := w.b.Set(w.buf[:k], w.buf[k:], nil); err != nil {
		return err
	}

	if e.Type == events.EntryLeaf {
		s.Leaf = cloneStr(e.TargetID)
	} else {
		s.Leaf = cloneStr(&e.ID)
	}

	switch e.Type {
	case events.EntryModelChange:
		s.Model = e.Provider + "/" + e.ModelID
	case events.EntryThinkingLevelChange:
		s.ThinkingLevel = e.ThinkingLevel
	case events.EntrySessionInfo:
		s.Name = e.Name
	case events.EntryApprovalRequested:
		s.Status = StatusWaiting
		return w.approvalRequested(sid, e, ms)
	case events.EntryApprovalAnswered:
		return w.approvalAnswered(sid, e)
	case events.EntryTaskStarted:
		s.Status = StatusWaiting // on its sub-agent
	case events.EntryTurnInterrupted:
		s.Status, s.awaitCompaction = StatusIdle, false
		return w.interrupt(s, e.Timestamp, ms)
	case events.EntryCompaction:
		// the compaction a reply's mark said follows it: the run settles
		if s.awaitCompaction {
			s.Status, s.awaitCompaction = StatusIdle, false
		}
	case events.EntryMessage:
		s.Messages++
		s.awaitCompaction = false
		return w.message(s, seq, e)
	}
	return nil
}

func (w *Writer) message(s *Summary, seq uint64, e *events.Entry) error {
	m := e.Message
	ts, ms := e.Timestamp, parseMs(e.Timestamp)
	if m.Timestamp != 0 {
		ms = m.Timestamp
		ts = events.FormatTime(time.UnixMilli(ms))
	}
	switch m.Role {
	case events.RoleUser:
		s.Status = StatusRunning
		s.principal = e.Principal
	case events.RoleToolResult:
		s.Status = StatusRunning
		return w.result(s, seq, e.ID, m, ts, ms)
	case events.RoleAssistant:
		if err := w.assistantUsage(s, m, ms); err != nil {
			return err
		}
		for _, b := range m.ToolCalls() {
			s.ToolCalls++
			c := &ToolCall{
				Tenant: s.Tenant, Session: s.ID, ID: b.ID, Tool: b.Name, ArgsDigest: argsDigest(b.Arguments),
				Outcome: OutcomePending, Started: ts, StartedMs: ms, EntryID: e.ID, Seq: seq, Principal: s.principal,
			}
			// Call ids are unique in a session (providers make them so); a
			// reused one replaces the record, and the indexes then list
			// the record once per call.
			if err := w.addCall(c); err != nil {
				return err
			}
			if !slices.Contains(s.Pending, b.ID) {
				s.Pending = append(s.Pending, b.ID)
			}
		}
		switch m.StopReason {
		case events.StopToolUse:
			s.Status = StatusRunning
		case events.StopAborted:
			s.Status = StatusIdle
			return w.interrupt(s, ts, ms)
		case events.StopError:
			// An error the harness retries (the entry's retry mark) does
			// not end the run: it backs off, or compacts, and calls the
			// model again.
			s.Status = StatusIdle
			if e.Retry != nil {
				s.Status = StatusRunning
			}
		default: // stop, length
			s.Status = StatusIdle
			if e.Retry != nil && e.Retry.Code == events.RetryCompaction {
				// a compaction follows the reply: the run settles on its entry
				s.Status, s.awaitCompaction = StatusRunning, true
			}
		}
	}
	return nil
}

func (w *Writer) assistantUsage(s *Summary, m *events.Message, ms int64) error {
	u := m.Usage
	if u == nil {
		u = &events.Usage{}
	}
	addTokens(&s.Tokens, u)
	s.Cost += u.Cost.Total
	if err := w.subagentUsage(s, u); err != nil {
		return err
	}
	model := m.Model
	if m.Provider != "" && m.Model != "" {
		model = m.Provider + "/" + m.Model
	}
	if model == "" {
		model = s.Model
	}
	if model == "" {
		model = "unknown"
	}
	day := time.UnixMilli(ms).UTC().Format(time.DateOnly)
	agg, err := w.usageOf(s.Tenant, day, model)
	if err != nil {
		return err
	}
	agg.Calls++
	addTokens(&agg.Tokens, u)
	agg.Cost += u.Cost.Total
	if s.principal != "" {
		if agg.ByPrincipal == nil {
			agg.ByPrincipal = map[string]*PrincipalUsage{}
		}
		pu := agg.ByPrincipal[s.principal]
		if pu == nil {
			pu = &PrincipalUsage{}
			agg.ByPrincipal[s.principal] = pu
		}
		pu.Calls++
		addTokens(&pu.Tokens, u)
		pu.Cost += u.Cost.Total
	}
	return nil
}

func addTokens(t *Tokens, u *events.Usage) {
	t.Input += u.Input
	t.Output += u.Output
	t.CacheRead += u.CacheRead
	t.CacheWrite += u.CacheWrite
	t.Total += u.TotalTokens
}

func (w *Writer) result(s *Summary, seq uint64, entryID string, m *events.Message, ts string, ms int64) error {
	cs, err := w.call(s.ref(), m.ToolCallID)
	if err != nil {
		return err
	}
	if cs == nil {
		// A result without a recorded call: audit it from the result alone.
		c := &ToolCall{Tenant: s.Tenant, Session: s.ID, ID: m.ToolCallID, Tool: m.ToolName, Started: ts, StartedMs: ms, Seq: seq}
		if err := w.addCall(c); err != nil {
			return err
		}
		cs = w.calls[callKey(s.ref(), c.ID)]
	}
	c := cs.c
	c.Outcome = OutcomeOK
	if m.IsError {
		c.Outcome = OutcomeError
	}
	c.Ended = ts
	c.DurationMs = max(ms-c.StartedMs, 0)
	c.ResultID = entryID
	s.Pending = slices.DeleteFunc(s.Pending, func(id string) bool { return id == m.ToolCallID })
	if len(s.Pending) == 0 {
		s.Pending = nil
	}
	return nil
}

// interrupt marks the session's pending tool calls interrupted at ts.
func (w *Writer) interrupt(s *Summary, ts string, ms int64) error {
	for _, id := range s.Pending {
		cs, err := w.call(s.ref(), id)
		if err != nil {
			return err
		}
		if cs == nil || cs.c.Outcome != OutcomePending {
			continue
		}
		cs.c.Outcome = OutcomeInterrupted
		cs.c.Ended = ts
		cs.c.DurationMs = max(ms-cs.c.StartedMs, 0)
	}
	s.Pending = nil
	return nil
}

func argsDigest(args json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, args); err != nil {
		buf.Reset()
		buf.Write(args)
	}
	sum := sha256.Sum256(buf.Bytes())
	return "sha256:" + hex.EncodeToString(sum[:])
}

func cloneStr(p *string) *string {
	if p == nil {
		return nil
	}
	s := *p
	return &s
}
