package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/cairn-agents/cairn/pkg/sessiontree"
)

// These routes read the log itself, not a read model: the context the
// reducer builds, exports, and imports (a new session written through the
// log's optimistic concurrency, so it cannot overwrite one that exists).

func (g *Gateway) loadSession(w http.ResponseWriter, r *http.Request) (*session.Session, bool) {
	sid, ok := sessionRef(w, r)
	if !ok {
		return nil, false
	}
	if g.cfg.Log == nil {
		writeError(w, http.StatusServiceUnavailable, codeUnavailable, "the session log is not configured on this gateway")
		return nil, false
	}
	s, err := session.Load(r.Context(), g.cfg.Log, sid)
	if errors.Is(err, session.ErrNotFound) {
		writeError(w, http.StatusNotFound, codeNotFound, fmt.Sprintf("no session %q", sid.ID))
		return nil, false
	}
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, codeUnavailable, "reading the log: "+err.Error())
		return nil, false
	}
	return s, true
}

func (g *Gateway) getContext(w http.ResponseWriter, r *http.Request) {
	s, ok := g.loadSession(w, r)
	if !ok {
		return
	}
	idx, err := s.Index()
	if err != nil {
		writeError(w, http.StatusInternalServerError, codeInternal, err.Error())
		return
	}
	var path []events.Entry
	if leaf := r.URL.Query().Get("leaf"); leaf != "" {
		if err := events.ValidateEntryID(leaf); err != nil {
			writeError(w, http.StatusBadRequest, codeInvalid, "leaf: "+err.Error())
			return
		}
		if path, err = idx.Path(leaf); err != nil {
			writeError(w, http.StatusNotFound, codeNotFound, fmt.Sprintf("leaf: no entry %q in session %s", leaf, s.ID()))
			return
		}
	} else {
		path = idx.ActivePath()
	}
	header := s.Header()
	c, err := sessiontree.BuildContext(&header, path)
	if err != nil {
		writeError(w, http.StatusInternalServerError, codeInternal, err.Error())
		return
	}
	resp := contextResponse{Messages: c.Messages, Model: c.Model, ThinkingLevel: c.ThinkingLevel, Tools: c.Tools,
		CompactionID: c.CompactionID}
	if len(path) > 0 {
		resp.Leaf = path[len(path)-1].ID
	}
	if resp.Messages == nil {
		resp.Messages = []events.Message{}
	}
	if rec, ok, err := events.LastSystemPrompt(path); ok && err == nil {
		// One that does not decode (an imported file's) is left out.
		resp.SystemPrompt = &rec
	}
	writeJSON(w, http.StatusOK, resp)
}

// contextResponse is GET /v1/sessions/{id}/context.
type contextResponse struct {
	Leaf          string           `json:"leaf,omitempty"`
	Model         string           `json:"model"`
	ThinkingLevel string           `json:"thinkingLevel"`
	Tools         []string         `json:"tools"`
	CompactionID  string           `json:"compactionId,omitempty"`
	Messages      []events.Message `json:"messages"`
	// SystemPrompt is the system prompt the branch's model calls were last
	// sent with, as the orchestrator recorded it; absent before a run.
	SystemPrompt *events.SystemPromptRecord `json:"systemPrompt,omitempty"`
}

func (g *Gateway) export(w http.ResponseWriter, r *http.Request) {
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "pi"
	}
	if format != "pi" && format != "jsonl" {
		writeError(w, http.StatusBadRequest, codeInvalid, fmt.Sprintf("format: unknown %q (want pi or jsonl)", format))
		return
	}
	s, ok := g.loadSession(w, r)
	if !ok {
		return
	}
	var buf bytes.Buffer
	if format == "pi" {
		entries := s.Entries()
		if err := events.WritePiFile(&buf, entries[0], entries[1:]); err != nil {
			writeError(w, http.StatusInternalServerError, codeInternal, "export: "+err.Error())
			return
		}
	} else {
		// One entry a line, also for an entry stored across lines before
		// entries were compacted where they enter (events.AppendLine).
		b := buf.AvailableBuffer()
		for _, rec := range s.Records() {
			var err error
			if b, err = events.AppendLine(b, rec.Data); err != nil {
				writeError(w, http.StatusInternalServerError, codeInternal, "export: "+err.Error())
				return
			}
		}
		buf.Write(b)
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", s.ID()+".jsonl"))
	writeBody(w, buf.Bytes())
}

func (g *Gateway) importSession(w http.ResponseWriter, r *http.Request) {
	tenant, ok := tenant(w, r)
	if !ok {
		return
	}
	if g.cfg.Log == nil {
		writeError(w, http.StatusServiceUnavailable, codeUnavailable, "the session log is not configured on this gateway")
		return
	}
	if g.cfg.ImportRefused != "" {
		writeError(w, http.StatusNotImplemented, codeNotImplemented, g.cfg.ImportRefused)
		return
	}
	body, ok := g.readBody(w, r)
	if !ok {
		return
	}
	header, entries, err := events.ReadPiFile(bytes.NewReader(body))
	if err != nil {
		writeError(w, http.StatusBadRequest, codeInvalid, "pi file: "+err.Error())
		return
	}
	if id := r.URL.Query().Get("id"); id != "" {
		header.ID = id
	}
	if err := events.ValidateSessionID(header.ID); err != nil {
		writeError(w, http.StatusBadRequest, codeInvalid, "the session id (header or ?id=): "+err.Error())
		return
	}
	// The session is the caller's tenant's; a file recording another
	// tenant (a Cairn export) cannot move a session across tenants.
	if header.Tenant != "" && header.Tenant != tenant {
		writeError(w, http.StatusBadRequest, codeInvalid, fmt.Sprintf("tenant: the file's session belongs to tenant %q; it can only be imported into that tenant", header.Tenant))
		return
	}
	header.Tenant = tenant
	s, err := session.Create(r.Context(), g.cfg.Log, header)
	if errors.Is(err, session.ErrConflict) {
		writeError(w, http.StatusConflict, codeRejected, fmt.Sprintf("session %q already exists; import under another ?id=", header.ID))
		return
	}
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, codeUnavailable, "import: "+err.Error())
		return
	}
	for i, e := range entries {
		if _, err := s.AppendExact(r.Context(), e); err != nil {
			writeError(w, http.StatusConflict, codeRejected, fmt.Sprintf("import stopped at entry %d (%s): %v", i+1, e.ID, err))
			return
		}
	}
	writeJSON(w, http.StatusCreated, map[string]any{"id": s.ID(), "entries": len(entries) + 1})
}
