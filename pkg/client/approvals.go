package client

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"time"
)

// Approval is one approval request and its answer, as GET /v1/approvals
// lists them (DESIGN §11).
type Approval struct {
	Tenant          string          `json:"tenant"`
	Session         string          `json:"session"`
	ToolCallID      string          `json:"toolCallId"`
	Tool            string          `json:"tool"`
	Arguments       json.RawMessage `json:"arguments"`
	Status          string          `json:"status"` // pending, approved, denied, expired, aborted
	RequestedAt     string          `json:"requestedAt"`
	ExpiresAt       string          `json:"expiresAt,omitempty"`
	EntryID         string          `json:"entryId"`
	AnsweredAt      string          `json:"answeredAt,omitempty"`
	AnsweredBy      string          `json:"answeredBy,omitempty"`
	Reason          string          `json:"reason,omitempty"`
	EditedArguments json.RawMessage `json:"editedArguments,omitempty"`
	AnswerEntryID   string          `json:"answerEntryId,omitempty"`
}

// ApprovalFilter selects approvals of the caller's tenant; zero fields do
// not filter.
type ApprovalFilter struct {
	Status  string
	Session string
	Tool    string
	Since   time.Time
	Until   time.Time
	Limit   int
	Cursor  string
}

// ApprovalPage is one page of approvals, oldest request first.
type ApprovalPage struct {
	Approvals  []Approval `json:"approvals"`
	NextCursor string     `json:"nextCursor,omitempty"`
}

// Approvals lists approval requests (GET /v1/approvals).
func (c *Client) Approvals(ctx context.Context, f ApprovalFilter) (ApprovalPage, error) {
	q := url.Values{}
	for k, v := range map[string]string{"status": f.Status, "session": f.Session, "tool": f.Tool, "cursor": f.Cursor} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if !f.Since.IsZero() {
		q.Set("since", f.Since.UTC().Format(time.RFC3339Nano))
	}
	if !f.Until.IsZero() {
		q.Set("until", f.Until.UTC().Format(time.RFC3339Nano))
	}
	if f.Limit != 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var out ApprovalPage
	err := c.getJSON(ctx, "/v1/approvals", q, &out)
	return out, err
}

// Approval statuses.
const (
	ApprovalPending  = "pending"
	ApprovalApproved = "approved"
	ApprovalDenied   = "denied"
	ApprovalExpired  = "expired"
	ApprovalAborted  = "aborted"
)
