package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"

	"github.com/cairn-agents/cairn/pkg/events"
)

// CreateSession is the body of POST /v1/sessions. Every field is optional.
type CreateSession struct {
	// ID is the session's id (1–64 of A-Z a-z 0-9 _ -); generated if empty.
	ID string `json:"id,omitempty"`
	// CommandID is the create command's idempotency key; derived from ID if
	// empty, so retrying a create with the same ID stores one command.
	CommandID string `json:"commandId,omitempty"`
	// Model is provider/model; empty: the orchestrator's default.
	Model string `json:"model,omitempty"`
	// SystemPrompt replaces the default system prompt.
	SystemPrompt string `json:"systemPrompt,omitempty"`
	// Tools names the tools the agent may use; nil: every registered tool.
	Tools []string `json:"tools,omitempty"`
	// Workspace is the session's working directory, relative to the
	// workspace root or absolute inside it; empty: the session id.
	Workspace string `json:"workspace,omitempty"`
	// Approvals is the session's approval policy: which tools wait for a
	// person's answer (DESIGN §11); nil: none does.
	Approvals *events.Approvals `json:"approvals,omitempty"`
}

// Accepted is the gateway's answer to a command (create included).
type Accepted struct {
	// SessionID is the session's id (create only).
	SessionID string `json:"id,omitempty"`
	// CommandID is the command's id: the one given, or the generated one.
	CommandID string `json:"commandId"`
	// Sequence is the command's sequence in CAIRN_COMMANDS.
	Sequence uint64 `json:"sequence"`
	// Duplicate: a command with this id was stored before; this call stored
	// nothing and, with WaitApplied, did not wait (its outcome is in the
	// log: [Client.CommandStatus]).
	Duplicate bool `json:"duplicate,omitempty"`
	// EntryID and LogSequence name the first log entry that applied the
	// command (WaitApplied only).
	EntryID     string `json:"entryId,omitempty"`
	LogSequence uint64 `json:"logSequence,omitempty"`
	// EditorText (navigate, WaitApplied only): the navigation went to a
	// user or custom message, so the leaf is now its parent and this is the
	// message's text, handed back for editing as pi does.
	EditorText string `json:"editorText,omitempty"`
	// NoEffect (WaitApplied only): applied, and nothing was written (a
	// navigation to the current leaf).
	NoEffect bool `json:"noEffect,omitempty"`
	// Applied: the gateway answered once the command was applied (200).
	Applied bool `json:"-"`
}

// A SendOption changes how a command is sent.
type SendOption func(*sendOptions)

type sendOptions struct{ wait bool }

// WaitApplied makes the call return once the orchestrator has applied the
// command (Accepted.Applied) or refused it: an [*Error] with status 409
// ([ErrRejected]) carrying the reason. If it takes longer than the
// gateway's wait timeout the call fails with [ErrTimeout]; the command is
// stored all the same and will be applied.
func WaitApplied() SendOption { return func(o *sendOptions) { o.wait = true } }

func sendQuery(opts []SendOption) url.Values {
	var o sendOptions
	for _, opt := range opts {
		opt(&o)
	}
	q := url.Values{}
	if o.wait {
		q.Set("wait", "applied")
	}
	return q
}

// CreateSession stores a create command (POST /v1/sessions). Without
// [WaitApplied] it returns once the command is durable (201); the session
// exists once the orchestrator has applied it.
func (c *Client) CreateSession(ctx context.Context, req CreateSession, opts ...SendOption) (Accepted, error) {
	var out Accepted
	status, err := c.doJSON(ctx, http.MethodPost, "/v1/sessions", sendQuery(opts), req, &out)
	out.Applied = status == http.StatusOK
	return out, err
}

// Tokens counts tokens over many model calls.
type Tokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
	Total      int64 `json:"total"`
}

// Session statuses (DESIGN §4).
const (
	StatusIdle    = "idle"    // no run: a client may rely on the last run being over
	StatusRunning = "running" // from a run's start to its settling, retries and compactions included
	StatusWaiting = "waiting" // parked on something outside the platform (approvals, sub-agents)
)

// Summary is a session as the read model holds it (GET /v1/sessions/{id}).
// The read model trails the log by the projector's lag.
type Summary struct {
	ID            string  `json:"id"`
	Status        string  `json:"status"`
	Leaf          *string `json:"leaf"` // nil before the first entry after the header
	Model         string  `json:"model,omitempty"`
	ThinkingLevel string  `json:"thinkingLevel,omitempty"`
	Name          string  `json:"name,omitempty"`
	Workspace     string  `json:"workspace,omitempty"`
	ParentSession string  `json:"parentSession,omitempty"`
	Tenant        string  `json:"tenant,omitempty"`
	Entries       int64   `json:"entries"`
	Messages      int64   `json:"messages"`
	ToolCalls     int64   `json:"toolCalls"`
	Tokens        Tokens  `json:"tokens"`
	Cost          float64 `json:"cost"`
	Created       string  `json:"created"`      // RFC 3339
	LastActivity  string  `json:"lastActivity"` // RFC 3339
	FirstSeq      uint64  `json:"firstSeq"`
	LastSeq       uint64  `json:"lastSeq"` // the stream sequence of its last entry applied
	// PendingToolCalls lists tool calls of the current turn with no result yet.
	PendingToolCalls []string `json:"pendingToolCalls,omitempty"`
}

// ListSessions selects a page of GET /v1/sessions.
type ListSessions struct {
	Limit  int    // 1–1000; 0: the gateway's default (50)
	Cursor string // a previous page's NextCursor; "": the first page
}

// SessionPage is one page of sessions, newest activity first.
type SessionPage struct {
	Sessions []Summary `json:"sessions"`
	// NextCursor continues the listing; "" on the last page.
	NextCursor string `json:"nextCursor,omitempty"`
}

// ListSessions returns one page of sessions, newest activity first.
func (c *Client) ListSessions(ctx context.Context, req ListSessions) (SessionPage, error) {
	q := url.Values{}
	if req.Limit != 0 {
		q.Set("limit", strconv.Itoa(req.Limit))
	}
	if req.Cursor != "" {
		q.Set("cursor", req.Cursor)
	}
	var out SessionPage
	err := c.getJSON(ctx, "/v1/sessions", q, &out)
	return out, err
}

// AllSessions yields every session the read model holds, newest activity
// first, reading pages of pageSize (0: the gateway's default). It stops at
// the first error, yielding it. A session whose activity changes while the
// pages are read moves to the front of the listing and may be missed or
// yielded twice; compare LastActivity with the time the listing began to
// find them.
func (c *Client) AllSessions(ctx context.Context, pageSize int) iter.Seq2[Summary, error] {
	return func(yield func(Summary, error) bool) {
		req := ListSessions{Limit: pageSize}
		for {
			page, err := c.ListSessions(ctx, req)
			if err != nil {
				yield(Summary{}, err)
				return
			}
			for _, s := range page.Sessions {
				if !yield(s, nil) {
					return
				}
			}
			if page.NextCursor == "" {
				return
			}
			req.Cursor = page.NextCursor
		}
	}
}

// Session returns the read model's summary of session id; [ErrNotFound]
// if the read model has no entry of it (yet).
func (c *Client) Session(ctx context.Context, id string) (Summary, error) {
	path, err := sessionPath(id, "")
	if err != nil {
		return Summary{}, err
	}
	var out Summary
	err = c.getJSON(ctx, path, nil, &out)
	return out, err
}
