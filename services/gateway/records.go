package gateway

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
)

// GET /v1/sessions/{id}/records serves a session's entries exactly as the
// stream stores them, read from the stream itself: no snapshot, no read
// model. A client recomputes each entry's digest from these bytes and checks
// the hash chain on its own (`cairn audit verify` through the gateway, the
// SDK's VerifySession), so it trusts the gateway only to relay the log.

// streamReader is the optional power of a log to read a session from the
// stream alone, ignoring snapshots (session.JetStreamLog has it).
type streamReader interface {
	ReadStream(ctx context.Context, sid events.SessionRef) ([]session.Record, error)
}

// codeCorrupt: the stored log does not decode or a blob does not match.
const codeCorrupt = "corrupt"

func (g *Gateway) getRecords(w http.ResponseWriter, r *http.Request) {
	sid, ok := sessionRef(w, r)
	if !ok {
		return
	}
	if len(r.URL.Query()) > 0 {
		writeError(w, http.StatusBadRequest, codeInvalid, "this route takes no query parameters")
		return
	}
	if g.cfg.Log == nil {
		writeError(w, http.StatusServiceUnavailable, codeUnavailable, "the session log is not configured on this gateway")
		return
	}
	var recs []session.Record
	var err error
	if sr, ok := g.cfg.Log.(streamReader); ok {
		recs, err = sr.ReadStream(r.Context(), sid)
	} else {
		recs, err = g.cfg.Log.Read(r.Context(), sid, 0)
	}
	switch {
	case errors.Is(err, session.ErrCorrupt):
		writeError(w, http.StatusUnprocessableEntity, codeCorrupt, err.Error())
		return
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, codeUnavailable, "reading the log: "+err.Error())
		return
	case len(recs) == 0:
		writeError(w, http.StatusNotFound, codeNotFound, fmt.Sprintf("no session %q", sid.ID))
		return
	}
	var buf []byte
	for _, rec := range recs {
		// One record a line (events.AppendLine). An entry stored across
		// lines (before entries were compacted where they enter) is
		// written compacted, and its stored bytes, which its digest
		// covers, ride along exactly, base64 in "stored".
		line, err := events.AppendLine(nil, rec.Data)
		if err != nil {
			writeError(w, http.StatusUnprocessableEntity, codeCorrupt, fmt.Sprintf("sequence %d: %v", rec.Seq, err))
			return
		}
		buf = append(buf, `{"seq":`...)
		buf = strconv.AppendUint(buf, rec.Seq, 10)
		buf = append(buf, `,"entry":`...)
		buf = append(buf, line[:len(line)-1]...)
		if !bytes.Equal(line[:len(line)-1], rec.Data) {
			buf = append(buf, `,"stored":"`...)
			buf = base64.StdEncoding.AppendEncode(buf, rec.Data)
			buf = append(buf, '"')
		}
		buf = append(buf, "}\n"...)
	}
	w.Header().Set("Content-Type", "application/jsonl")
	writeBody(w, buf)
}
