package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cockroachdb/pebble/v2"
)

// Writer applies entries to the database in batches. Models read and changed
// by the entries of one batch are kept decoded until Commit writes them.
type Writer struct {
	d       *DB
	b       *pebble.Batch
	applied uint64 // last committed sequence
	last    uint64 // last sequence in the open batch
	n       int    // entries in the open batch
	bads    uint64 // entries recorded under bad/ by this writer

	sums  map[events.SessionRef]*sumState
	cache map[events.SessionRef]*sumState // committed summaries, to skip decoding them again
	open  map[string]*callState           // committed calls still pending, by call key
	calls map[string]*callState
	usage map[string]*Usage // usage rows changed in this batch
	uread map[string]*Usage // committed usage rows, to skip reading them again

	apprs     map[string]*approvalState // approvals changed in this batch
	apprCalls map[string]string         // call keys → request entry ids, this batch

	record func(repr []byte) // see SetRecorder
	buf    []byte            // scratch for keys and values
	flight *inflight         // the batch CommitAsync left committing, or nil
	err    error             // a failed commit: the writer is done
}

type sumState struct {
	s       *Summary
	origIdx string // activity index key in the database ("" = none)
}

type callState struct {
	c   *ToolCall
	new bool // indexes not yet written
}

// NewWriter returns a writer continuing after the database's applied sequence.
func (d *DB) NewWriter() (*Writer, error) {
	applied, err := d.Applied()
	if err != nil {
		return nil, err
	}
	w := &Writer{d: d, applied: applied, last: applied,
		sums: map[events.SessionRef]*sumState{}, cache: map[events.SessionRef]*sumState{}, open: map[string]*callState{}, calls: map[string]*callState{},
		usage: map[string]*Usage{}, uread: map[string]*Usage{},
		apprs: map[string]*approvalState{}, apprCalls: map[string]string{}}
	w.b = d.db.NewBatch()
	return w, nil
}

// maxCached bounds the summaries kept decoded between batches.
const maxCached = 50000

// reset starts a new batch after a commit.
func (w *Writer) reset() {
	w.b = w.d.db.NewBatch()
	w.n = 0
	if len(w.cache)+len(w.sums) > maxCached {
		clear(w.cache)
	}
	for sid, st := range w.sums {
		st.origIdx = activityKey(st.s.activityMs, sid)
		w.cache[sid] = st
	}
	clear(w.sums)
	if len(w.open) > maxCached {
		clear(w.open)
	}
	for k, cs := range w.calls {
		if cs.c.Outcome == OutcomePending {
			cs.new = false
			w.open[k] = cs
		}
	}
	clear(w.calls)
	if len(w.uread)+len(w.usage) > maxCached {
		clear(w.uread)
	}
	for k, u := range w.usage {
		w.uread[k] = u
	}
	clear(w.usage)
	clear(w.apprs)
	clear(w.apprCalls)
}

// Applied is the sequence of the last entry committed.
func (w *Writer) Applied() uint64 { return w.applied }

// Last is the sequence of the last entry applied, committed or not.
func (w *Writer) Last() uint64 { return w.last }

// Pending is the number of entries applied since the last commit.
func (w *Writer) Pending() int { return w.n }

// Apply projects the entry stored at stream sequence seq on subject. It
// returns false, nil for a sequence already covered (a redelivery). An entry
// that cannot be read is recorded under bad/ and is not an error. After an
// error the writer must be discarded.
func (w *Writer) Apply(seq uint64, subject string, data []byte) (bool, error) {
	if seq <= w.last {
		return false, nil
	}
	e, err := events.DecodeEntry(data)
	return w.ApplyDecoded(seq, subject, data, &e, err)
}

// ApplyDecoded is Apply for an entry already decoded from data with
// events.DecodeEntry (decodeErr is its error), so that decoding can run on
// another goroutine.
func (w *Writer) ApplyDecoded(seq uint64, subject string, data []byte, e *events.Entry, decodeErr error) (bool, error) {
	if seq <= w.last {
		return false, nil
	}
	w.last = seq
	w.n++
	sid, ok := events.SessionOf(subject)
	if !ok {
		return true, w.bad(seq, subject, "subject has no valid session id")
	}
	if decodeErr != nil {
		return true, w.bad(seq, subject, "entry does not decode: "+decodeErr.Error())
	}
	t, err := time.Parse(time.RFC3339Nano, e.Timestamp)
	if err != nil {
		return true, w.bad(seq, subject, "timestamp: "+err.Error())
	}
	return true, w.project(seq, sid, e, data, t.UnixMilli())
}

// Bad is the number of entries this writer recorded as unreadable.
func (w *Writer) Bad() uint64 { return w.bads }

func (w *Writer) bad(seq uint64, subject, reason string) error {
	w.bads++
	v, err := json.Marshal(Bad{Seq: seq, Subject: subject, Reason: reason})
	if err != nil {
		return err
	}
	return w.b.Set([]byte(badKey(seq)), v, nil)
}

// Commit writes the open batch with the applied sequence, without fsync.
// Committing an empty batch does nothing.
func (w *Writer) Commit() error { return w.commit(false) }

// CommitAsync is Commit, except that the batch commits on a goroutine of its
// own while the caller goes on applying entries to the next one: applying
// and writing to Pebble overlap (rebuild). At most one batch is in flight,
// and batches commit in order. Applied covers a batch once it has
// committed; Sync waits for that. An error of the batch in flight is
// returned by the next Commit, CommitAsync or Sync, or by an Apply that
// needs to read the database (which waits for the batch first).
func (w *Writer) CommitAsync() error { return w.commit(true) }

func (w *Writer) commit(async bool) error {
	if w.err != nil {
		return w.err
	}
	if w.n == 0 {
		return w.Sync()
	}
	if err := w.prepare(); err != nil {
		return err
	}
	// The previous batch must be in before this one goes: meta/applied
	// must end at this batch's sequence.
	if err := w.Sync(); err != nil {
		return err
	}
	b, last := w.b, w.last
	if async {
		f := &inflight{last: last, done: make(chan error, 1)}
		w.flight = f
		go func() { f.done <- commitBatch(b, last) }() // Sync receives it
	} else {
		if err := commitBatch(b, last); err != nil {
			w.err = err
			return err
		}
		w.applied = last
	}
	w.reset()
	return nil
}

// inflight is a batch committing on its own goroutine (CommitAsync).
type inflight struct {
	last uint64     // the batch's meta/applied
	done chan error // its commit's result
}

func commitBatch(b *pebble.Batch, last uint64) error {
	defer b.Close()
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("store: commit through sequence %d: %w", last, err)
	}
	return nil
}

// Sync waits for the batch CommitAsync left in flight, if any, and returns
// its error.
func (w *Writer) Sync() error {
	if f := w.flight; f != nil {
		w.flight = nil
		if err := <-f.done; err != nil {
			w.err = err
			return err
		}
		w.applied = f.last
	}
	return w.err
}

// prepare writes the models the open batch changed, and meta/applied, into
// it.
func (w *Writer) prepare() error {
	for _, st := range w.sums {
		if err := w.setJSON(sessionKey(st.s.ref()), storedSummary{st.s, st.s.awaitCompaction, st.s.principal}); err != nil {
			return err
		}
		idx := activityKey(st.s.activityMs, st.s.ref())
		if idx != st.origIdx {
			if st.origIdx != "" {
				if err := w.b.Delete([]byte(st.origIdx), nil); err != nil {
					return err
				}
			}
			if err := w.b.Set([]byte(idx), nil, nil); err != nil {
				return err
			}
		}
	}
	for k, cs := range w.calls {
		if err := w.setJSON(k, cs.c); err != nil {
			return err
		}
		if cs.new {
			c := cs.c
			for _, ik := range []string{
				byToolKey(c.Tool, c.StartedMs, c.ref(), c.ID),
				bySessionKey(c.ref(), c.StartedMs, c.ID),
				byTimeKey(c.StartedMs, c.ref(), c.ID),
			} {
				if err := w.b.Set([]byte(ik), nil, nil); err != nil {
					return err
				}
			}
		}
	}
	for k, u := range w.usage {
		if err := w.setJSON(k, u); err != nil {
			return err
		}
	}
	if err := w.prepareApprovals(); err != nil {
		return err
	}
	var seq [8]byte
	binary.BigEndian.PutUint64(seq[:], w.last)
	if err := w.b.Set([]byte(keyApplied), seq[:], nil); err != nil {
		return err
	}
	if w.record != nil {
		w.record(w.b.Repr())
	}
	return nil
}

// SetRecorder makes Commit call fn with each batch's Pebble representation
// (pebble.Batch.Repr) just before committing it; fn must not keep repr. It
// is for benchmarks that replay exactly the projector's writes.
func (w *Writer) SetRecorder(fn func(repr []byte)) { w.record = fn }

// Close waits for a batch in flight and discards an uncommitted one. It
// returns the error of the batch in flight, if any.
func (w *Writer) Close() error {
	err := w.Sync()
	return errors.Join(err, w.b.Close())
}

func (w *Writer) setJSON(key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("store: encode %q: %w", key, err)
	}
	return w.b.Set([]byte(key), b, nil)
}

// getJSON decodes the value at key into v; false if there is none. It reads
// the database once a batch in flight has committed.
func (w *Writer) getJSON(key string, v any) (bool, error) {
	if err := w.Sync(); err != nil {
		return false, err
	}
	b, err := w.d.get([]byte(key))
	if err != nil || b == nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("store: decode %q: %w", key, err)
	}
	return true, nil
}

// summary returns the session's summary, loading it or starting a new one.
func (w *Writer) summary(sid events.SessionRef) (*sumState, error) {
	if st, ok := w.sums[sid]; ok {
		return st, nil
	}
	if st, ok := w.cache[sid]; ok {
		delete(w.cache, sid)
		w.sums[sid] = st
		return st, nil
	}
	st := &sumState{s: &Summary{}}
	stored := storedSummary{Summary: st.s}
	found, err := w.getJSON(sessionKey(sid), &stored)
	if err != nil {
		return nil, err
	}
	if found {
		st.s.awaitCompaction = stored.AwaitCompaction
		st.s.principal = stored.Principal
		st.s.activityMs = parseMs(st.s.LastActivity)
		st.origIdx = activityKey(st.s.activityMs, sid)
	} else {
		st.s = &Summary{ID: sid.ID, Tenant: sid.Tenant, Status: StatusIdle}
	}
	w.sums[sid] = st
	return st, nil
}

// call returns the audit record of a tool call, or nil.
func (w *Writer) call(sid events.SessionRef, id string) (*callState, error) {
	k := callKey(sid, id)
	if cs, ok := w.calls[k]; ok {
		return cs, nil
	}
	if cs, ok := w.open[k]; ok {
		delete(w.open, k)
		w.calls[k] = cs
		return cs, nil
	}
	c := new(ToolCall)
	found, err := w.getJSON(k, c)
	if err != nil || !found {
		return nil, err
	}
	cs := &callState{c: c}
	w.calls[k] = cs
	return cs, nil
}

func (w *Writer) addCall(c *ToolCall) error {
	k := callKey(c.ref(), c.ID)
	if old, ok := w.calls[k]; ok && old.new {
		// The id was used before in this batch: index that call now, as a
		// commit between the two would have, so the indexes list a reused
		// id once per call whatever the batch boundaries.
		o := old.c
		for _, ik := range []string{
			byToolKey(o.Tool, o.StartedMs, o.ref(), o.ID),
			bySessionKey(o.ref(), o.StartedMs, o.ID),
			byTimeKey(o.StartedMs, o.ref(), o.ID),
		} {
			if err := w.b.Set([]byte(ik), nil, nil); err != nil {
				return err
			}
		}
	}
	w.calls[k] = &callState{c: c, new: true}
	return nil
}

func (w *Writer) usageOf(tenant, day, model string) (*Usage, error) {
	k := usageKey(tenant, day, model)
	if u, ok := w.usage[k]; ok {
		return u, nil
	}
	if u, ok := w.uread[k]; ok {
		delete(w.uread, k)
		w.usage[k] = u
		return u, nil
	}
	u := new(Usage)
	found, err := w.getJSON(k, u)
	if err != nil {
		return nil, err
	}
	if !found {
		u = &Usage{Tenant: tenant, Day: day, Model: model}
	}
	w.usage[k] = u
	return u, nil
}

func parseMs(ts string) int64 {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return 0
	}
	return t.UnixMilli()
}
