package client

import (
	"context"
	"net/http"
)

// The projector's admin routes: an online rebuild of the read models and
// their digest (docs/api/projector-queries.md, "Admin"). Every caller may
// use them today; once identity lands (DESIGN §9) they are for the admin
// role only, and another principal gets an *Error of status 403.

// Online rebuild states ([RebuildStatus.State]).
const (
	RebuildIdle       = "idle"       // none since the projector started
	RebuildRebuilding = "rebuilding" // filling a fresh database from sequence 1
	RebuildSwitching  = "switching"  // catching up with the live projector, switching over
	RebuildDone       = "done"       // queries read the rebuilt database
	RebuildFailed     = "failed"     // see Error; the live read models are unchanged
)

// RebuildStatus is where the projector's last online rebuild stands.
type RebuildStatus struct {
	State    string `json:"state"`
	Started  string `json:"started,omitempty"`  // RFC 3339
	Finished string `json:"finished,omitempty"` // RFC 3339, once done or failed
	// Target is the stream's last sequence when the rebuild started.
	Target uint64 `json:"target"`
	// Applied is the last sequence the rebuild has applied.
	Applied uint64 `json:"applied"`
	// LiveApplied is the live projector's applied sequence.
	LiveApplied uint64 `json:"liveApplied"`
	// Remaining is what the rebuild lacks before it switches over:
	// max(Target, LiveApplied) − Applied.
	Remaining        uint64  `json:"remaining"`
	EntriesPerSecond float64 `json:"entriesPerSecond"`
	ElapsedSeconds   float64 `json:"elapsedSeconds"`
	// EtaSeconds is Remaining at EntriesPerSecond; 0 when unknown.
	EtaSeconds float64 `json:"etaSeconds,omitempty"`
	Error      string  `json:"error,omitempty"`
}

// Running reports whether the rebuild has not ended.
func (s RebuildStatus) Running() bool {
	return s.State == RebuildRebuilding || s.State == RebuildSwitching
}

// Digest summarises the live read models: two databases with the same
// digest hold the same keys and values (what `cairn projector dump`
// prints).
type Digest struct {
	Applied uint64 `json:"applied"` // the last stream sequence applied
	Keys    int64  `json:"keys"`
	SHA256  string `json:"sha256"` // over every key and value, in key order
}

// StartRebuild starts an online rebuild of the read models and returns its
// status: the running projector fills a fresh database from stream
// sequence 1 while queries are answered from the live one, then switches
// over to it. Follow it with [Client.RebuildStatus]. One runs at a time:
// while one does, the error matches ErrRejected (409 rebuild_running); when
// the projector does not run, ErrUnavailable.
func (c *Client) StartRebuild(ctx context.Context) (RebuildStatus, error) {
	var out RebuildStatus
	_, err := c.doJSON(ctx, http.MethodPost, "/v1/admin/projector/rebuild", nil, nil, &out)
	return out, err
}

// RebuildStatus returns the status of the projector's last online rebuild
// (state RebuildIdle if none ran since it started).
func (c *Client) RebuildStatus(ctx context.Context) (RebuildStatus, error) {
	var out RebuildStatus
	err := c.getJSON(ctx, "/v1/admin/projector/rebuild", nil, &out)
	return out, err
}

// Digest returns the digest of the live read models, from one snapshot.
func (c *Client) Digest(ctx context.Context) (Digest, error) {
	var out Digest
	err := c.getJSON(ctx, "/v1/admin/projector/digest", nil, &out)
	return out, err
}
