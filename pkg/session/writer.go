package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/sessiontree"
)

// ErrDuplicate: an entry id is already in the session.
var ErrDuplicate = errors.New("session: entry id already in the session")

// ErrUnknownEntry: an id names no entry of the session (a parent, a label
// or leaf target, a navigation target). It is [sessiontree.ErrUnknownEntry],
// so a query of the tree and an append match the same sentinel.
var ErrUnknownEntry = sessiontree.ErrUnknownEntry

// Session is one session's log held in memory by its writer: the records
// read or appended so far, the expected sequence of the next append, and
// the tree they form.
//
// Appends go through the [Log] with the sequence of the last record as the
// expected one and the digest of its stored bytes as ParentDigest. When an
// append fails with [ErrConflict] another writer has appended: the Session
// is lost and every later append fails with ErrConflict without writing;
// the owner drops it (or loads it again with [Load]). Any other append
// error leaves the Session as it was: the write may or may not have landed,
// and appending the same entry (same id) again is safe, since the log
// deduplicates it.
//
// # Concurrency
//
// A Session is not safe for concurrent use: it has one owner (the writer).
type Session struct {
	log  Log
	id   events.SessionRef
	recs []Record
	// kinds maps every tree entry id to its type, to validate appends
	// without rebuilding the index.
	kinds map[string]string
	leaf  *string            // the active leaf (nil = before the first entry)
	idx   *sessiontree.Index // built on demand, dropped by every append
	lost  bool
	// shrunk holds the records in stored form only while recs, kinds and
	// idx are dropped (see Shrink).
	shrunk []stored
}

// now is the clock of default timestamps.
var now = time.Now

// Create appends the `session` header h as the first entry of a new session
// whose id is h.ID in tenant h.Tenant (empty: [events.DefaultTenant], and
// recorded so). Type, Version (pi's format version) and Timestamp are
// filled in when empty. It fails with [ErrConflict] if the session exists,
// unless its header is h itself (a retried create).
func Create(ctx context.Context, log Log, h events.Entry) (*Session, error) {
	if h.Type == "" {
		h.Type = events.EntrySession
	}
	if h.Type != events.EntrySession {
		return nil, &events.FieldError{Field: "type", Problem: fmt.Sprintf("a session starts with a %q entry, got %q", events.EntrySession, h.Type)}
	}
	if h.Tenant == "" {
		h.Tenant = events.DefaultTenant
	}
	ref := events.SessionRef{Tenant: h.Tenant, ID: h.ID}
	if err := ref.Validate(); err != nil {
		return nil, err
	}
	if h.Version == 0 {
		h.Version = events.PiVersion
	}
	if h.Timestamp == "" {
		h.Timestamp = events.FormatTime(now())
	}
	h.ParentID, h.ParentDigest = nil, ""
	data, err := encodeEntry(h)
	if err != nil {
		return nil, err
	}
	rec, err := log.Append(ctx, ref, 0, h)
	if errors.Is(err, ErrConflict) {
		return nil, fmt.Errorf("%w: session %s already exists", ErrConflict, h.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("create session %s: %w", h.ID, err)
	}
	if rec.Digest != Digest(data) {
		// The log deduplicated the header: an identical one is a retried
		// create, a different one is another session of that id.
		return nil, fmt.Errorf("%w: session %s already exists", ErrConflict, h.ID)
	}
	return &Session{log: log, id: ref, recs: []Record{rec}, kinds: map[string]string{}}, nil
}

// Load reads session sid from the log. A session with no entries fails with
// [ErrNotFound]; one that does not start with its header, or whose entries
// do not form a tree, with [ErrCorrupt].
func Load(ctx context.Context, log Log, sid events.SessionRef) (*Session, error) {
	recs, err := log.Read(ctx, sid, 0)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%w: session %s has no entries", ErrNotFound, sid)
	}
	return fromRecords(log, sid, recs)
}

func fromRecords(log Log, sid events.SessionRef, recs []Record) (*Session, error) {
	h := recs[0].Entry
	if h.Type != events.EntrySession || h.ID != sid.ID {
		return nil, fmt.Errorf("%w: session %s starts with a %q entry %q, want its %q header", ErrCorrupt, sid, h.Type, h.ID, events.EntrySession)
	}
	// A header without a tenant was written before tenants: the default's.
	if t := cmp.Or(h.Tenant, events.DefaultTenant); t != sid.Tenant {
		return nil, fmt.Errorf("%w: session %s records tenant %q in its header", ErrCorrupt, sid, t)
	}
	s := &Session{log: log, id: sid, recs: recs, kinds: make(map[string]string, len(recs))}
	if _, err := s.Index(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	for _, r := range recs[1:] {
		s.track(&r.Entry)
	}
	return s, nil
}

// ID is the session id (unique within its tenant).
func (s *Session) ID() string { return s.id.ID }

// Ref is the session's tenant and id.
func (s *Session) Ref() events.SessionRef { return s.id }

// Header is the session's `session` entry.
func (s *Session) Header() events.Entry {
	s.expanded()
	return s.recs[0].Entry
}

// Records returns the session's records in log order. The slice is the
// Session's own: read it, do not change it.
func (s *Session) Records() []Record {
	s.expanded()
	return s.recs
}

// Len is the number of records in the session.
func (s *Session) Len() int {
	if s.shrunk != nil {
		return len(s.shrunk)
	}
	return len(s.recs)
}

// Entries returns a new slice of the session's entries in log order.
func (s *Session) Entries() []events.Entry {
	s.expanded()
	out := make([]events.Entry, len(s.recs))
	for i := range s.recs {
		out[i] = s.recs[i].Entry
	}
	return out
}

// LastSeq is the sequence of the last record: the expected sequence of the
// next append.
func (s *Session) LastSeq() uint64 {
	if n := len(s.shrunk); n > 0 {
		return s.shrunk[n-1].seq
	}
	return s.recs[len(s.recs)-1].Seq
}

// Leaf is the active leaf: the parent of the next entry (nil = the next
// entry is a new root).
func (s *Session) Leaf() *string { return s.leaf }

// Lost reports whether an append lost a race with another writer.
func (s *Session) Lost() bool { return s.lost }

// Index returns the tree of the session's entries (built on demand).
func (s *Session) Index() (*sessiontree.Index, error) {
	if err := s.Expand(); err != nil {
		return nil, err
	}
	if s.idx == nil {
		idx, err := sessiontree.NewIndex(s.Entries())
		if err != nil {
			return nil, err
		}
		s.idx = idx
	}
	return s.idx, nil
}

// Path returns the entries from a root down to entry id, inclusive.
func (s *Session) Path(id string) ([]events.Entry, error) {
	idx, err := s.Index()
	if err != nil {
		return nil, err
	}
	return idx.Path(id)
}

// Children returns the ids of the entries whose parent is id ("" = roots).
func (s *Session) Children(id string) ([]string, error) {
	idx, err := s.Index()
	if err != nil {
		return nil, err
	}
	return idx.Children(id)
}

// Labels returns entry id → label.
func (s *Session) Labels() (map[string]string, error) {
	idx, err := s.Index()
	if err != nil {
		return nil, err
	}
	return idx.Labels(), nil
}

// track updates the writer's view after e was appended.
func (s *Session) track(e *events.Entry) {
	s.kinds[e.ID] = e.Type
	if e.Type == events.EntryLeaf {
		s.leaf = e.TargetID
		return
	}
	id := e.ID
	s.leaf = &id
}

// Append appends e under the active leaf: its ParentID is set to [Session.Leaf].
// ID (a new random id) and Timestamp (now) are filled in when empty.
func (s *Session) Append(ctx context.Context, e events.Entry) (Record, error) {
	e.ParentID = clonePtr(s.leaf)
	return s.AppendExact(ctx, e)
}

// AppendExact appends e with the ParentID it has (nil = a new root), as an
// import or a fork does. ID and Timestamp are filled in when empty.
func (s *Session) AppendExact(ctx context.Context, e events.Entry) (Record, error) {
	if s.lost {
		return Record{}, fmt.Errorf("%w: session %s was lost to another writer; load it again", ErrConflict, s.id)
	}
	if err := s.Expand(); err != nil {
		return Record{}, err
	}
	if e.ID == "" {
		e.ID = events.NewID()
	}
	if e.Timestamp == "" {
		e.Timestamp = events.FormatTime(now())
	}
	if err := s.check(&e); err != nil {
		return Record{}, err
	}
	last := &s.recs[len(s.recs)-1]
	e.ParentDigest = last.Digest
	ctx, span := startAppend(ctx, s.id, &e)
	rec, err := s.log.Append(ctx, s.id, last.Seq, e)
	endAppend(span, rec, err)
	if errors.Is(err, ErrConflict) {
		s.lost = true
	}
	if err != nil {
		return Record{}, err
	}
	s.recs = append(s.recs, rec)
	s.track(&rec.Entry)
	s.idx = nil
	return rec, nil
}

// check validates e against the tree before it is written.
func (s *Session) check(e *events.Entry) error {
	if e.Type == events.EntrySession {
		return &events.FieldError{Field: "type", Problem: "a session has one `session` entry, its first"}
	}
	if e.Type == "" {
		return &events.FieldError{Field: "type", Problem: "is required"}
	}
	if err := events.ValidateEntryID(e.ID); err != nil {
		return err
	}
	if _, dup := s.kinds[e.ID]; dup || e.ID == s.id.ID {
		return fmt.Errorf("%w: session %s already has an entry %q", ErrDuplicate, s.id, e.ID)
	}
	if e.ParentID != nil {
		if _, ok := s.kinds[*e.ParentID]; !ok {
			return fmt.Errorf("%w: parentId %q of entry %q", ErrUnknownEntry, *e.ParentID, e.ID)
		}
	}
	switch e.Type {
	case events.EntryLabel:
		if e.TargetID == nil {
			return &events.FieldError{Field: "targetId", Problem: "a label needs the entry it labels"}
		}
		if _, ok := s.kinds[*e.TargetID]; !ok {
			return fmt.Errorf("%w: label target %q", ErrUnknownEntry, *e.TargetID)
		}
	case events.EntryLeaf:
		if e.TargetID != nil {
			kind, ok := s.kinds[*e.TargetID]
			if !ok {
				return fmt.Errorf("%w: leaf target %q", ErrUnknownEntry, *e.TargetID)
			}
			if kind == events.EntryLeaf {
				return &events.FieldError{Field: "targetId", Problem: fmt.Sprintf("%q is a leaf entry; move to a conversation entry", *e.TargetID)}
			}
		}
	}
	return nil
}

// MoveTo makes target the active leaf (nil = before the first entry) by
// appending a durable `leaf` entry.
func (s *Session) MoveTo(ctx context.Context, target *string) (Record, error) {
	return s.Append(ctx, events.Entry{Type: events.EntryLeaf, TargetID: clonePtr(target)})
}

// SetLabel labels entry target (an empty label clears it).
func (s *Session) SetLabel(ctx context.Context, target, label string) (Record, error) {
	return s.Append(ctx, events.Entry{Type: events.EntryLabel, TargetID: &target, Label: label})
}

// Navigate moves to target (nil = before the first entry). With a summary
// of the branch being left, it appends a `branch_summary` entry under
// target instead of a `leaf` entry (fromId: the leaf being left, "root" if
// none); the summary then is the active leaf, as in pi.
func (s *Session) Navigate(ctx context.Context, target *string, summary string, details []byte) (Record, error) {
	if summary == "" {
		return s.MoveTo(ctx, target)
	}
	if err := s.Expand(); err != nil {
		return Record{}, err
	}
	if target != nil {
		if kind, ok := s.kinds[*target]; !ok {
			return Record{}, fmt.Errorf("%w: navigate target %q", ErrUnknownEntry, *target)
		} else if kind == events.EntryLeaf {
			return Record{}, &events.FieldError{Field: "entryId", Problem: fmt.Sprintf("%q is a leaf entry; navigate to a conversation entry", *target)}
		}
	}
	from := "root"
	if s.leaf != nil {
		from = *s.leaf
	}
	return s.AppendExact(ctx, events.Entry{Type: events.EntryBranchSummary, ParentID: clonePtr(target), FromID: from, Summary: summary, Details: details})
}

// Fork creates session newID of s's tenant in log (which may be s's own) holding a copy
// of the path from a root to entry at (at == "": the active path), its
// header recording s as ParentSession. Entries keep their ids; `label` and
// `leaf` entries whose target is not on the path are left out, and what
// hung under them is re-attached to their parent.
func (s *Session) Fork(ctx context.Context, log Log, newID, at string) (*Session, error) {
	if at == "" {
		if s.leaf == nil {
			return nil, fmt.Errorf("%w: session %s has no active path to fork", ErrUnknownEntry, s.id)
		}
		at = *s.leaf
	}
	path, err := s.Path(at)
	if err != nil {
		return nil, err
	}
	h := s.Header()
	h.ID, h.ParentSession, h.Timestamp, h.Extra = newID, s.id.ID, "", nil
	h.Tenant = s.id.Tenant // a fork stays in its tenant
	h.Labels = cloneMap(h.Labels)
	f, err := Create(ctx, log, h)
	if err != nil {
		return nil, err
	}
	kept := map[string]bool{}
	remap := map[string]*string{} // skipped entry -> its parent
	for _, e := range path {
		parent := e.ParentID
		for parent != nil {
			if p, skipped := remap[*parent]; skipped {
				parent = p
				continue
			}
			break
		}
		if (e.Type == events.EntryLabel || e.Type == events.EntryLeaf) && e.TargetID != nil && !kept[*e.TargetID] {
			remap[e.ID] = parent
			continue
		}
		e.ParentID = clonePtr(parent)
		if _, err := f.AppendExact(ctx, e); err != nil {
			return nil, fmt.Errorf("fork %s into %s: %w", s.id, newID, err)
		}
		kept[e.ID] = true
	}
	return f, nil
}

func clonePtr(p *string) *string {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Snapshotter is the optional power of a [Log] to keep a snapshot of a
// session for fast cold loads ([JetStreamLog] has it).
type Snapshotter interface {
	WriteSnapshot(ctx context.Context, sid events.SessionRef, recs []Record) error
}

// Snapshot stores the session as it is now as its snapshot, if the log keeps
// snapshots (else it does nothing). Writers call it when a session settles
// (a run ends), so that the next cold load, on whatever node, reads one
// object and no tail.
func (s *Session) Snapshot(ctx context.Context) error {
	sn, ok := s.log.(Snapshotter)
	if !ok {
		return nil
	}
	recs := s.recs
	if s.shrunk != nil {
		// Only the stored bytes are written: no need to decode.
		recs = make([]Record, len(s.shrunk))
		for i, st := range s.shrunk {
			recs[i] = Record{Session: s.id, Seq: st.seq, Data: st.data, Digest: st.digest}
		}
	}
	return sn.WriteSnapshot(ctx, s.id, recs)
}
