package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// ReplayPoint says where a replay stops: after the entry at stream
// sequence Seq, or at the last entry timestamped at or before Time. The
// zero value replays the whole session; set one field, not both.
type ReplayPoint struct {
	Seq  uint64
	Time time.Time
}

// Replayed is a session as it was at a point of its log.
type Replayed struct {
	Summary Summary
	Tree    Tree
	Entries []Record
}

// Replay returns session sid as it was at point at, reduced with the
// projector's rules from the log itself (GET .../replay: no read model
// involved). [ErrNotFound] if the log holds no entry of it before at.
func (c *Client) Replay(ctx context.Context, sid string, at ReplayPoint) (Replayed, error) {
	path, err := sessionPath(sid, "/replay")
	if err != nil {
		return Replayed{}, err
	}
	q := url.Values{}
	switch {
	case at.Seq != 0 && !at.Time.IsZero():
		return Replayed{}, fmt.Errorf("%w: replay point: give a sequence or a time, not both", ErrInvalid)
	case at.Seq != 0:
		q.Set("until", strconv.FormatUint(at.Seq, 10))
	case !at.Time.IsZero():
		q.Set("until", at.Time.UTC().Format(time.RFC3339Nano))
	}
	var out Replayed
	err = c.getJSON(ctx, path, q, &out)
	return out, err
}

// replayWire is a replay's JSON form.
type replayWire struct {
	Summary Summary      `json:"summary"`
	Tree    Tree         `json:"tree"`
	Entries []recordLine `json:"entries"`
}

// MarshalJSON writes the replay as the gateway does: {summary, tree,
// entries: [{seq, entry}]}, each entry its stored bytes.
func (r Replayed) MarshalJSON() ([]byte, error) {
	entries := make([]recordLine, len(r.Entries))
	for i, e := range r.Entries {
		entries[i] = recordLine{Seq: e.Seq, Entry: e.Data}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // as the gateway writes it
	if err := enc.Encode(replayWire{r.Summary, r.Tree, entries}); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON reads a replay in the gateway's form (what
// projector.Replayed encodes to), decoding each entry and computing its
// digest.
func (r *Replayed) UnmarshalJSON(data []byte) error {
	var w replayWire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	out := Replayed{Summary: w.Summary, Tree: w.Tree, Entries: make([]Record, 0, len(w.Entries))}
	for _, l := range w.Entries {
		rec, err := l.record()
		if err != nil {
			return err
		}
		out.Entries = append(out.Entries, rec)
	}
	*r = out
	return nil
}
