package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/telemetry"
	"github.com/cairn-agents/cairn/services/gateway/internal/fanout"
	"github.com/nats-io/nats.go"
)

// createRequest is the body of POST /v1/sessions.
type createRequest struct {
	ID           string   `json:"id"`
	CommandID    string   `json:"commandId"`
	Model        string   `json:"model"`
	SystemPrompt string   `json:"systemPrompt"`
	Tools        []string `json:"tools"`
	Workspace    string   `json:"workspace"`
	// Approvals is the session's approval policy (DESIGN §11).
	Approvals *events.Approvals `json:"approvals"`
}

func (g *Gateway) createSession(w http.ResponseWriter, r *http.Request) {
	tenant, ok := tenant(w, r)
	if !ok {
		return
	}
	body, ok := g.readBody(w, r)
	if !ok {
		return
	}
	var req createRequest
	if len(bytes.TrimSpace(body)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			writeError(w, http.StatusBadRequest, codeInvalid, "invalid body: "+describeJSONErr(err))
			return
		}
		if dec.More() {
			writeError(w, http.StatusBadRequest, codeInvalid, "invalid body: one JSON object expected, found more after it")
			return
		}
	}
	if req.ID == "" {
		req.ID = events.NewID()
	}
	if err := events.ValidateSessionID(req.ID); err != nil {
		writeError(w, http.StatusBadRequest, codeInvalid, err.Error())
		return
	}
	if req.CommandID == "" {
		req.CommandID = events.DeriveID("create", req.ID)
	}
	cmd := events.Command{V: events.SchemaVersion, ID: req.CommandID, Type: events.CmdCreate, SessionID: req.ID,
		Model: req.Model, SystemPrompt: req.SystemPrompt, Tools: req.Tools, Workspace: req.Workspace, Approvals: req.Approvals}
	if err := cmd.Validate(); err != nil {
		writeError(w, http.StatusBadRequest, codeInvalid, err.Error())
		return
	}
	ref := events.SessionRef{Tenant: tenant, ID: req.ID}
	if err := g.check(ref, &cmd); err != nil {
		writeError(w, http.StatusBadRequest, codeInvalid, err.Error())
		return
	}
	g.submit(w, r, ref, cmd, http.StatusCreated, map[string]any{"id": req.ID, "commandId": cmd.ID})
}

func (g *Gateway) postCommand(w http.ResponseWriter, r *http.Request) {
	ref, ok := sessionRef(w, r)
	if !ok {
		return
	}
	sid := ref.ID
	body, ok := g.readBody(w, r)
	if !ok {
		return
	}
	// The id and session may be left out; fill them before strict decoding.
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		writeError(w, http.StatusBadRequest, codeInvalid, "body must be a JSON object (a command)")
		return
	}
	if raw, ok := fields["sessionId"]; ok {
		var s string
		if json.Unmarshal(raw, &s) != nil || s != sid {
			writeError(w, http.StatusBadRequest, codeInvalid, fmt.Sprintf("sessionId: %s does not match the session in the path (%q)", raw, sid))
			return
		}
	}
	if _, ok := fields["principal"]; ok {
		writeError(w, http.StatusBadRequest, codeInvalid, "principal: is set by the gateway from the request's credentials, not by the client")
		return
	}
	fields["sessionId"], _ = json.Marshal(sid)
	if _, ok := fields["id"]; !ok {
		fields["id"], _ = json.Marshal(events.NewID())
	}
	filled, _ := json.Marshal(fields)
	cmd, err := events.DecodeCommand(filled)
	if err == nil {
		err = g.check(ref, &cmd)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, codeInvalid, err.Error())
		return
	}
	g.submit(w, r, ref, cmd, http.StatusAccepted, map[string]any{"commandId": cmd.ID})
}

// submit stores cmd in CAIRN_COMMANDS and answers with status and resp, or,
// with ?wait=applied, once the log shows the command applied or refused.
// ref is the command's session: its tenant decides the subject.
func (g *Gateway) submit(w http.ResponseWriter, r *http.Request, ref events.SessionRef, cmd events.Command, status int, resp map[string]any) {
	if p, ok := PrincipalFrom(r.Context()); ok {
		cmd.Principal = p.ID // who sent it, for the log's readers
	}
	wait := r.URL.Query().Get("wait")
	if wait != "" && wait != "applied" {
		writeError(w, http.StatusBadRequest, codeInvalid, fmt.Sprintf("wait: unknown value %q (the only one is \"applied\")", wait))
		return
	}
	if cmd.Type == events.CmdCreate || cmd.Type == events.CmdSetTools {
		// A tool set names each tool once (the orchestrator checks too,
		// for commands that reach it another way).
		if err := events.UniqueToolNames("tools", cmd.Tools); err != nil {
			writeError(w, http.StatusBadRequest, codeInvalid, err.Error())
			return
		}
	}
	if !g.admits(w, r, ref, cmd) { // over budget: 429 (budget.go)
		return
	}
	var sub, outcome *fanout.Sub
	if wait == "applied" {
		// Subscribe before storing the command, so its effect cannot slip
		// by: an entry naming it in the log, or its refusal where the
		// session has no log, or its outcome when it writes nothing (outcomes.go).
		sub = g.log.Subscribe(g.cfg.Names.SessionSubject(ref))
		defer sub.Close()
		outcome = g.outcomeFeed.Subscribe(g.outcomes.subject(ref, cmd.ID))
		defer outcome.Close()
	}
	data, err := json.Marshal(cmd)
	if err != nil {
		writeError(w, http.StatusInternalServerError, codeInternal, "encode command: "+err.Error())
		return
	}
	if !g.fitsNATS(w, len(data)) {
		return
	}
	msg := &nats.Msg{Subject: g.cfg.Names.CommandSubject(ref), Data: data, Header: nats.Header{}}
	msg.Header.Set(events.HeaderMsgID, events.CommandMsgID(ref.Tenant, cmd.ID))
	msg.Header.Set(events.HeaderSchema, fmt.Sprint(events.SchemaVersion))
	telemetry.Inject(r.Context(), msg.Header) // the orchestrator continues this request's trace
	ack, err := g.cfg.JetStream.PublishMsg(r.Context(), msg)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, codeUnavailable, "the command was not stored: "+err.Error())
		return
	}
	g.metrics.commands.WithLabelValues(cmd.Type).Inc()
	resp["sequence"] = ack.Sequence
	if ack.Duplicate {
		resp["duplicate"] = true
	}
	if sub == nil || ack.Duplicate {
		// A duplicate was stored earlier and may be applied already; its
		// outcome is in the log (GET .../entries).
		writeJSON(w, status, resp)
		return
	}
	g.awaitApplied(w, r.Context(), sub, outcome, ref, cmd, resp)
}

// awaitApplied waits for the first log entry naming the command, or for
// its outcome recorded without a log entry (outcomes.go): a refusal where
// the session has no log, or a command applied with nothing written.
func (g *Gateway) awaitApplied(w http.ResponseWriter, ctx context.Context, sub, outcome *fanout.Sub, ref events.SessionRef, cmd events.Command, resp map[string]any) {
	commandID := cmd.ID
	timer := time.NewTimer(g.cfg.WaitTimeout)
	defer timer.Stop()
	for {
		select {
		case m, ok := <-outcome.C:
			if !ok {
				writeError(w, http.StatusServiceUnavailable, codeUnavailable, "stopped following the outcomes: "+errString(outcome.Err()))
				return
			}
			oc, err := events.DecodeOutcome(m.Data)
			if err != nil || oc.CommandID != commandID {
				continue
			}
			if oc.NoEffect {
				resp["noEffect"] = true
				writeJSON(w, http.StatusOK, resp)
				return
			}
			writeRejected(w, commandID, oc.Reason, oc.Code)
			return
		case m, ok := <-sub.C:
			if !ok {
				writeError(w, http.StatusServiceUnavailable, codeUnavailable, "stopped following the log: "+errString(sub.Err()))
				return
			}
			e, err := events.DecodeEntry(m.Data)
			if err != nil || e.CommandID != commandID {
				continue
			}
			if e.Type == events.EntryCommandRejected {
				writeRejected(w, commandID, e.Reason, e.Code)
				return
			}
			resp["entryId"] = e.ID
			resp["logSequence"] = m.Seq
			if text := g.editorText(ctx, ref, &e); text != "" {
				resp["editorText"] = text
			}
			writeJSON(w, http.StatusOK, resp)
			return
		case <-timer.C:
			writeError(w, http.StatusGatewayTimeout, codeTimeout,
				fmt.Sprintf("command %s is stored but was not applied within %s; it will still be applied", commandID, g.cfg.WaitTimeout))
			return
		case <-ctx.Done():
			return
		}
	}
}

// writeRejected answers 409 for a refused command: the reason as the
// error's message, its code as "reason".
func writeRejected(w http.ResponseWriter, commandID, reason, code string) {
	if code == codeBudgetExceeded { // refused by the orchestrator over budget (budget.go)
		writeJSON(w, http.StatusTooManyRequests, map[string]any{
			"error":     apiError{Code: codeBudgetExceeded, Message: reason},
			"commandId": commandID, "reason": code,
		})
		return
	}
	writeJSON(w, http.StatusConflict, map[string]any{
		"error":     apiError{Code: codeRejected, Message: reason},
		"commandId": commandID, "reason": code,
	})
}

func errString(err error) string {
	if err == nil {
		return "closed"
	}
	return err.Error()
}

func (g *Gateway) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := g.readAllLimited(w, r, g.cfg.MaxBodyBytes)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, codeTooLarge, fmt.Sprintf("body is over the limit of %d bytes", mbe.Limit))
			return nil, false
		}
		g.writeBodyError(w, err)
		return nil, false
	}
	return body, true
}

// readAllLimited reads r's body, at most limit bytes, within
// BodyReadTimeout: the connection's read deadline is set for the body
// and lifted after it, so a long response (an SSE stream) is not cut.
func (g *Gateway) readAllLimited(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	rc := http.NewResponseController(w)
	// An error means the writer cannot set deadlines (a test recorder):
	// the body is then read without one.
	deadline := rc.SetReadDeadline(time.Now().Add(g.cfg.BodyReadTimeout)) == nil
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if deadline && err == nil {
		// Lifted only after a whole body: after a failure the server may
		// try to drain the rest before answering, and must not wait for
		// a client that stalled.
		_ = rc.SetReadDeadline(time.Time{})
	}
	return body, err
}

// writeBodyError answers a body that could not be read: 408 when the
// client sent it slower than BodyReadTimeout (and the connection closes),
// else 400.
func (g *Gateway) writeBodyError(w http.ResponseWriter, err error) {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusRequestTimeout, codeTimeout, fmt.Sprintf("the body was not received within %s", g.cfg.BodyReadTimeout))
		return
	}
	writeError(w, http.StatusBadRequest, codeInvalid, "reading body: "+err.Error())
}

// entryRoom is what a command's log entry may add to the command's bytes
// (ids, timestamps, digests, the principal) and its NATS headers: a
// command within MaxPayload less this fits the stream as an entry too.
const entryRoom = 8 << 10

// fitsNATS answers 413 when a command of n bytes is over what the
// platform's NATS stores in one message.
func (g *Gateway) fitsNATS(w http.ResponseWriter, n int) bool {
	max := g.cfg.JetStream.Conn().MaxPayload()
	if max <= 0 || int64(n) <= max-entryRoom {
		return true
	}
	writeError(w, http.StatusRequestEntityTooLarge, codeTooLarge,
		fmt.Sprintf("the command is %d bytes; this platform's NATS stores at most %d bytes in one message (max_payload %d, less %d for the log entry)", n, max-entryRoom, max, entryRoom))
	return false
}

func validSessionPath(w http.ResponseWriter, sid string) bool {
	if err := events.ValidateSessionID(sid); err != nil {
		writeError(w, http.StatusBadRequest, codeInvalid, "session id in path: "+err.Error())
		return false
	}
	return true
}
