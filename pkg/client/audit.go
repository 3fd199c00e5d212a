package client

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/cairn-agents/cairn/pkg/sessiontree"
)

// Tool-call outcomes.
const (
	OutcomePending     = "pending"     // called, no result yet
	OutcomeOK          = "ok"          // a result that is not an error
	OutcomeError       = "error"       // an error result
	OutcomeInterrupted = "interrupted" // the turn ended before a result
)

// ToolCall is the audit record of one tool call.
type ToolCall struct {
	Tenant     string `json:"tenant,omitempty"` // the session's tenant
	Session    string `json:"session"`
	ID         string `json:"id"`
	Tool       string `json:"tool"`
	ArgsDigest string `json:"argsDigest"` // sha256 of the arguments as logged, "sha256:<hex>"
	Outcome    string `json:"outcome"`
	Started    string `json:"started"` // RFC 3339: when the assistant message asked for it
	Ended      string `json:"ended,omitempty"`
	DurationMs int64  `json:"durationMs"`
	EntryID    string `json:"entryId"`                 // the assistant message
	ResultID   string `json:"resultEntryId,omitempty"` // the toolResult message
	Seq        uint64 `json:"seq"`
	StartedMs  int64  `json:"startedMs"` // Started in Unix ms
	// Principal is who sent the prompt the call answers ("key:<id>",
	// "oidc:<sub>"); absent without one.
	Principal string `json:"principal,omitempty"`
}

// ToolCallFilter selects tool calls of GET /v1/audit/tool-calls. Zero fields
// do not filter.
type ToolCallFilter struct {
	Tool        string
	Session     string
	Since       time.Time // started at or after
	Until       time.Time // started before
	Outcome     string    // one of the Outcome* values
	Principal   string    // who sent the prompt the call answers
	MinDuration time.Duration
	Limit       int    // 1–1000; 0: the gateway's default (100)
	Cursor      string // a previous page's NextCursor
}

// ToolCallPage is one page of tool calls in order of start time. A page may
// hold fewer calls than the limit and still have a NextCursor; only an
// empty NextCursor means the end.
type ToolCallPage struct {
	ToolCalls  []ToolCall `json:"toolCalls"`
	NextCursor string     `json:"nextCursor,omitempty"`
}

// ToolCalls returns a page of the tool-call audit across sessions.
func (c *Client) ToolCalls(ctx context.Context, f ToolCallFilter) (ToolCallPage, error) {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("tool", f.Tool)
	set("session", f.Session)
	set("outcome", f.Outcome)
	set("principal", f.Principal)
	set("cursor", f.Cursor)
	if !f.Since.IsZero() {
		q.Set("since", f.Since.UTC().Format(time.RFC3339Nano))
	}
	if !f.Until.IsZero() {
		q.Set("until", f.Until.UTC().Format(time.RFC3339Nano))
	}
	if f.MinDuration != 0 {
		q.Set("minDuration", f.MinDuration.String())
	}
	if f.Limit != 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var out ToolCallPage
	err := c.getJSON(ctx, "/v1/audit/tool-calls", q, &out)
	return out, err
}

// Problem kinds of a [Verification].
const (
	ProblemEdited    = session.ProblemEdited    // an entry's bytes changed after its successor recorded their digest
	ProblemRemoved   = session.ProblemRemoved   // entries are missing before this one
	ProblemReordered = session.ProblemReordered // an entry's parent digest names another entry of the log
	ProblemHeader    = "header"                 // the first entry is not the session's header
	ProblemTree      = "tree"                   // the entries do not form a tree (a parent unknown, an id twice...)
	ProblemCorrupt   = "corrupt"                // the stored log does not decode
)

// Problem is one thing wrong with a session's log.
type Problem struct {
	Kind    string // a Problem* value
	EntryID string // the entry it is about, if one
	Seq     uint64 // its sequence, if known
	Detail  string // a sentence for people
}

func (p Problem) String() string { return p.Detail }

// Verification is the result of checking one session's log.
type Verification struct {
	Session string
	// Entries is how many entries were checked.
	Entries int
	// LastDigest is the digest of the last entry: compare it with one kept
	// elsewhere to notice entries cut off the end, which leave no break.
	LastDigest string
	// Problems is empty when the log is intact.
	Problems []Problem
}

// OK reports whether no problem was found.
func (v Verification) OK() bool { return len(v.Problems) == 0 }

// VerifySession reads session sid's stored entries ([Client.Records]) and
// checks, on this side of the wire, that they form an unbroken hash chain
// (each entry's parentDigest is the digest of the bytes before it), that
// the first is the session's header and that the entries form a tree. A
// log the gateway reports corrupt is a verification with that problem, not
// an error; errors are for a log that cannot be read at all.
func (c *Client) VerifySession(ctx context.Context, sid string) (Verification, error) {
	recs, err := c.Records(ctx, sid)
	var ae *Error
	if errors.As(err, &ae) && errors.Is(err, ErrCorrupt) {
		return Verification{Session: sid, Problems: []Problem{{Kind: ProblemCorrupt, Detail: ae.Message}}}, nil
	}
	if err != nil {
		return Verification{}, err
	}
	return Verify(sid, recs), nil
}

// Verify checks the records of session sid, in log order, as
// [Client.VerifySession] does; the CLI uses it for logs it reads from NATS.
func Verify(sid string, recs []Record) Verification {
	v := Verification{Session: sid, Entries: len(recs)}
	if len(recs) == 0 {
		v.Problems = append(v.Problems, Problem{Kind: ProblemRemoved, Detail: fmt.Sprintf("session %s: the log holds no entry", sid)})
		return v
	}
	v.LastDigest = session.Digest(recs[len(recs)-1].Data)
	srecs := make([]session.Record, len(recs))
	entries := make([]events.Entry, len(recs))
	for i, r := range recs {
		srecs[i] = session.Record{Session: events.DefaultRef(sid), Seq: r.Seq, Entry: r.Entry, Data: r.Data, Digest: session.Digest(r.Data)}
		entries[i] = r.Entry
	}
	for _, p := range session.VerifyChain(srecs) {
		v.Problems = append(v.Problems, Problem{Kind: p.Kind, EntryID: p.EntryID, Seq: p.Seq, Detail: p.Error()})
	}
	if h := entries[0]; h.Type != events.EntrySession || h.ID != sid {
		v.Problems = append(v.Problems, Problem{Kind: ProblemHeader, EntryID: h.ID, Seq: recs[0].Seq,
			Detail: fmt.Sprintf("the first entry is a %q entry %q, not the session's header", h.Type, h.ID)})
	}
	if _, err := sessiontree.NewIndex(entries); err != nil {
		v.Problems = append(v.Problems, Problem{Kind: ProblemTree, Detail: err.Error()})
	}
	return v
}
