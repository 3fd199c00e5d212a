package projector

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
)

// The admin queries: the online rebuild and the live digest. The gateway
// proxies them under the same paths; once identity lands (DESIGN §9) they
// are for the admin role only. `cairn projector --http` serves them on its
// own address, which, like the rest of that address, must not be exposed
// beyond the platform.
const (
	PathRebuild = "/v1/admin/projector/rebuild"
	PathDigest  = "/v1/admin/projector/digest"
)

// LiveDigest returns the digest of the live database (Dump's), of one
// snapshot: the applied sequence, the number of keys and a SHA-256 over
// every key and value.
func (p *Projector) LiveDigest(ctx context.Context) (Digest, error) {
	db, done, err := p.live.acquire(ctx)
	if err != nil {
		return Digest{}, err
	}
	defer done()
	return db.Dump(nil)
}

// rebuildRoute: POST starts an online rebuild (202 with its status; 409
// rebuild_running if one runs, 503 unavailable if the projector does not
// run or cannot read the stream), GET reports the last one's status.
func (p *Projector) rebuildRoute(w http.ResponseWriter, r *http.Request) {
	if q := parseParams(r.URL.RawQuery); q.err != nil {
		writeErr(w, q.err)
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		writeJSON(w, p.RebuildStatus())
	case http.MethodPost:
		if b, _ := io.ReadAll(io.LimitReader(r.Body, 1024)); strings.TrimSpace(string(b)) != "" && strings.TrimSpace(string(b)) != "{}" {
			writeError(w, http.StatusBadRequest, "invalid_body", "body: a rebuild takes no parameters; send none (or {})")
			return
		}
		st, err := p.StartRebuild(r.Context())
		switch {
		case errors.Is(err, ErrRebuildRunning):
			writeError(w, http.StatusConflict, "rebuild_running", "an online rebuild is already running: follow it with GET "+PathRebuild)
		case errors.Is(err, ErrNotRunning):
			writeError(w, http.StatusServiceUnavailable, "unavailable", err.Error())
		case err != nil:
			writeError(w, http.StatusServiceUnavailable, "unavailable", err.Error())
		default:
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Location", PathRebuild)
			w.WriteHeader(http.StatusAccepted)
			writeJSON(w, st)
		}
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not allowed here; use POST to start a rebuild, GET to follow it")
	}
}

func (p *Projector) digest(w http.ResponseWriter, r *http.Request) error {
	if q := parseParams(r.URL.RawQuery); q.err != nil {
		return q.err
	}
	d, err := p.LiveDigest(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, d)
	return nil
}
