package projector

import (
	"errors"
	"net/http"
	"strconv"
	"time"
)

// replay serves GET /v1/sessions/{id}/replay?until=SEQ|TIME: the session as
// it was at a point of its log, reduced by [Replay] from the log itself (no
// read model involved), as `cairn replay` prints it.
func (p *Projector) replay(w http.ResponseWriter, r *http.Request) error {
	sid, err := sessionID(r)
	if err != nil {
		return err
	}
	q := parseParams(r.URL.RawQuery, "until")
	at := parseUntil(q)
	if q.err != nil {
		return q.err
	}
	out, err := Replay(r.Context(), p.cfg.JetStream, p.cfg.Prefix, sid, at)
	if errors.Is(err, ErrSessionNotFound) {
		writeError(w, http.StatusNotFound, "not_found", err.Error())
		return nil
	}
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "replay: "+err.Error())
		return nil
	}
	writeJSON(w, out)
	return nil
}

// parseUntil reads `until`: a stream sequence (from 1) or an RFC 3339 time.
func parseUntil(q *params) ReplayPoint {
	s := q.nonEmpty("until")
	if s == "" {
		return ReplayPoint{}
	}
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		if n == 0 {
			q.fail("until", "a stream sequence starts at 1, got 0")
		}
		return ReplayPoint{Seq: n}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		q.fail("until", "must be a stream sequence or an RFC 3339 time such as 2026-01-02T15:04:05Z, got %q", s)
		return ReplayPoint{}
	}
	return ReplayPoint{Time: t}
}
