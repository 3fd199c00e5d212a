package session

import (
	"fmt"

	"github.com/cairn-agents/cairn/pkg/events"
)

// Chain problem kinds reported by [VerifyChain].
const (
	ProblemEdited    = "edited"    // an entry's bytes changed after its successor recorded their digest
	ProblemRemoved   = "removed"   // entries are missing before this one
	ProblemReordered = "reordered" // this entry's parent digest names another entry of the log
)

// ChainError is a break in a session's hash chain: which entry, at which
// sequence, and what kind of tampering explains it.
type ChainError struct {
	Session events.SessionRef
	Kind    string // ProblemEdited, ProblemRemoved or ProblemReordered
	EntryID string // the entry the problem is about
	Seq     uint64 // its sequence
	Detail  string // a sentence for people
}

func (e *ChainError) Error() string {
	return fmt.Sprintf("session %s: entry %s (sequence %d) %s: %s", e.Session.ID, e.EntryID, e.Seq, e.Kind, e.Detail)
}

// Is makes errors.Is(err, ErrCorrupt) hold for a ChainError.
func (e *ChainError) Is(target error) bool { return target == ErrCorrupt }

// VerifyChain checks the hash chain of one session's records, in log order,
// and returns every break found (nil if none).
//
// The chain proves order and content: each entry's ParentDigest must be the
// Digest of the stored bytes of the entry before it. A break is explained as
// a reordering when the parent digest names another record of the log, as an
// edit of the previous entry when the broken entry's ParentID still names it,
// and otherwise as removed entries. Entries cut off the end of a log leave no
// break; compare the last digest with one kept elsewhere (a snapshot, the
// read model) to notice that.
func VerifyChain(recs []Record) []*ChainError {
	bySum := make(map[string]int, len(recs))
	for i := range recs {
		bySum[Digest(recs[i].Data)] = i
	}
	var probs []*ChainError
	add := func(r *Record, kind, format string, args ...any) {
		probs = append(probs, &ChainError{Session: r.Session, Kind: kind, EntryID: r.Entry.ID, Seq: r.Seq, Detail: fmt.Sprintf(format, args...)})
	}
	for i := range recs {
		r := &recs[i]
		got := r.Entry.ParentDigest
		if i == 0 {
			if got != "" {
				if j, ok := bySum[got]; ok {
					add(r, ProblemReordered, "it comes first but its parent digest names entry %s (sequence %d)", recs[j].Entry.ID, recs[j].Seq)
				} else {
					add(r, ProblemRemoved, "it comes first but records a parent digest: entries before it are missing")
				}
			}
			continue
		}
		prev := &recs[i-1]
		if got == Digest(prev.Data) {
			continue
		}
		if j, ok := bySum[got]; ok {
			add(r, ProblemReordered, "its parent digest names entry %s (sequence %d), but it follows entry %s (sequence %d)", recs[j].Entry.ID, recs[j].Seq, prev.Entry.ID, prev.Seq)
			continue
		}
		if got == "" {
			add(r, ProblemEdited, "it has no parent digest but follows entry %s (sequence %d)", prev.Entry.ID, prev.Seq)
			continue
		}
		if r.Entry.ParentID != nil && *r.Entry.ParentID == prev.Entry.ID ||
			r.Entry.ParentID == nil && prev.Entry.Type == events.EntrySession {
			probs = append(probs, &ChainError{Session: prev.Session, Kind: ProblemEdited, EntryID: prev.Entry.ID, Seq: prev.Seq,
				Detail: fmt.Sprintf("its stored bytes no longer match the digest its child %s (sequence %d) recorded", r.Entry.ID, r.Seq)})
			continue
		}
		add(r, ProblemRemoved, "its parent digest names no entry of the log: entries between %s (sequence %d) and it are missing", prev.Entry.ID, prev.Seq)
	}
	return probs
}
