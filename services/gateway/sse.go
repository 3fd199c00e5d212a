package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/nats-io/nats.go/jetstream"
)

// streamEvents serves a session's live events as SSE. Each event's id is its
// stream sequence; Last-Event-ID (or ?after=) resumes after it, even 0.
// A session sessionKnown does not know (another tenant's included) gets
// the 404 the JSON routes answer, before any stream is opened.
//
// A stream that does not resume starts with an id-only field, the position
// it follows from, so a client that loses the connection before any event
// resumes without a gap. After the stored events a resumed stream (or
// ?from=start) replays, a ": live" comment says the rest is live.
func (g *Gateway) streamEvents(w http.ResponseWriter, r *http.Request) {
	sid, ok := sessionRef(w, r)
	if !ok {
		return
	}
	after, resume, err := resumePoint(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, codeInvalid, err.Error())
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, codeInternal, "streaming is not supported by this connection")
		return
	}
	known, err := g.sessionKnown(r.Context(), sid)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, codeUnavailable, "looking the session up: "+err.Error())
		return
	}
	if !known {
		// What every JSON route answers for a missing session; another
		// tenant's session is looked up on this tenant's subjects only, so
		// it gets this same answer.
		writeError(w, http.StatusNotFound, codeNotFound, fmt.Sprintf("no session %q", sid.ID))
		return
	}
	subject := g.cfg.Names.EventSubject(sid)
	// Subscribe first, then read what the stream already holds: every event
	// is then seen at least once, and duplicates are skipped by sequence.
	sub := g.events.Subscribe(subject)
	defer sub.Close()
	g.metrics.sseActive.Inc()
	defer g.metrics.sseActive.Dec()

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()

	last := after
	if resume || r.URL.Query().Get("from") == "start" {
		last, err = g.backfill(r.Context(), w, subject, after)
		if err != nil {
			writeSSEComment(w, "backfill failed: "+err.Error())
			return
		}
	} else {
		last = sub.From
		writeBody(w, fmt.Appendf(nil, "id: %d\n\n", last))
	}
	writeSSEComment(w, "live")
	flusher.Flush()
	keepalive := time.NewTicker(15 * time.Second)
	defer keepalive.Stop()
	// A stream opened with an API key ends soon after the key is revoked;
	// one opened with a JWT ends when the token expires.
	var recheck, expired <-chan time.Time
	keyID := ""
	if p, ok := PrincipalFrom(r.Context()); ok {
		if strings.HasPrefix(p.ID, "key:") {
			keyID = strings.TrimPrefix(p.ID, "key:")
			t := time.NewTicker(revokedStreamCheck)
			defer t.Stop()
			recheck = t.C
		}
		if !p.Expires.IsZero() {
			t := time.NewTimer(time.Until(p.Expires))
			defer t.Stop()
			expired = t.C
		}
	}
	for {
		select {
		case <-expired:
			writeSSEComment(w, "stream closed: the token has expired; reconnect with a fresh one and Last-Event-ID")
			flusher.Flush()
			return
		case <-recheck:
			if !g.keys.active(keyID) {
				writeSSEComment(w, "stream closed: the API key was revoked")
				flusher.Flush()
				return
			}
		case m, ok := <-sub.C:
			if !ok {
				// Too slow or shutting down: the client resumes with Last-Event-ID.
				writeSSEComment(w, "stream closed: "+errString(sub.Err()))
				flusher.Flush()
				return
			}
			if m.Seq <= last {
				continue
			}
			last = m.Seq
			writeSSEEvent(w, m.Seq, m.Data)
			flusher.Flush()
		case <-keepalive.C:
			writeSSEComment(w, "keepalive")
			flusher.Flush()
		case <-r.Context().Done():
			return
		}
	}
}

// createLookups bounds how many stored commands of a session without a
// log sessionKnown reads in search of its create.
const createLookups = 64

// sessionKnown reports whether session ref has a log, or a create command
// stored and not yet applied (a client may open the stream right after a
// create it did not wait for). Both are read on ref's own subjects
// (<prefix>.session.<tenant>.<sid>, <prefix>.cmd.*.<tenant>.<sid>), so
// another tenant's session of that id is not known. A session without a
// log that was sent more than createLookups other commands first counts as
// known: its stream is the caller's tenant's and stays empty.
func (g *Gateway) sessionKnown(ctx context.Context, ref events.SessionRef) (bool, error) {
	n := g.cfg.Names
	sessions, err := g.cfg.JetStream.Stream(ctx, n.SessionsStream())
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
	case err != nil:
		return false, err
	default:
		_, err := sessions.GetLastMsgForSubject(ctx, n.SessionSubject(ref))
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, jetstream.ErrMsgNotFound) {
			return false, err
		}
	}
	cmds, err := g.cfg.JetStream.Stream(ctx, n.CommandsStream())
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	subject := n.StoredSessionCommands(ref)
	var seq uint64
	for range createLookups {
		m, err := cmds.GetMsg(ctx, seq+1, jetstream.WithGetMsgSubject(subject))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		seq = m.Sequence
		var c struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(m.Data, &c) == nil && c.Type == events.CmdCreate {
			return true, nil
		}
	}
	return true, nil
}

// revokedStreamCheck is how often an SSE stream checks that the API key it
// was opened with is still valid.
const revokedStreamCheck = 2 * time.Second

// backfill writes the events of subject stored after seq and returns the
// last sequence written.
func (g *Gateway) backfill(ctx context.Context, w http.ResponseWriter, subject string, after uint64) (uint64, error) {
	stream, err := g.cfg.JetStream.Stream(ctx, g.cfg.Names.EventsStream())
	if err != nil {
		return after, err
	}
	last := after
	for {
		m, err := stream.GetMsg(ctx, last+1, jetstream.WithGetMsgSubject(subject))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return last, nil
		}
		if err != nil {
			return last, err
		}
		last = m.Sequence
		writeSSEEvent(w, m.Sequence, m.Data)
	}
}

// resumePoint returns the sequence to resume after, and whether the client
// asked to resume at all.
func resumePoint(r *http.Request) (uint64, bool, error) {
	v := r.Header.Get("Last-Event-ID")
	field := "Last-Event-ID"
	if q := r.URL.Query().Get("after"); q != "" {
		v, field = q, "after"
	}
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%s: must be an event id (a stream sequence), got %q", field, v)
	}
	return n, true, nil
}

// writeSSEEvent writes one event: its data on one data: line
// (events.AppendLine), whatever line breaks the stored bytes hold.
func writeSSEEvent(w http.ResponseWriter, seq uint64, data []byte) {
	b := fmt.Appendf(nil, "id: %d\ndata: ", seq)
	b, err := events.AppendLine(b, data)
	if err != nil {
		writeSSEComment(w, fmt.Sprintf("event %d skipped: %v", seq, err))
		return
	}
	writeBody(w, append(b, '\n'))
}

func writeSSEComment(w http.ResponseWriter, s string) {
	writeBody(w, fmt.Appendf(nil, ": %s\n\n", s))
}
