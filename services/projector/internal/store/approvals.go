package store

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
)

// Approval statuses.
const (
	ApprovalPending  = "pending"
	ApprovalApproved = "approved"
	ApprovalDenied   = "denied"
	ApprovalExpired  = "expired"
	ApprovalAborted  = "aborted"
)

// ValidApprovalStatus reports whether s names an approval status.
func ValidApprovalStatus(s string) bool {
	switch s {
	case ApprovalPending, ApprovalApproved, ApprovalDenied, ApprovalExpired, ApprovalAborted:
		return true
	}
	return false
}

// Approval is the read model of one approval request and its answer (key
// ap/<ref>/<request entry id>; indexed by time under apt/<tenant>/).
type Approval struct {
	Tenant      string          `json:"tenant"`
	Session     string          `json:"session"`
	ToolCallID  string          `json:"toolCallId"`
	Tool        string          `json:"tool"`
	Arguments   json.RawMessage `json:"arguments"`
	Status      string          `json:"status"`
	RequestedAt string          `json:"requestedAt"`
	RequestedMs int64           `json:"-"`
	ExpiresAt   string          `json:"expiresAt,omitempty"`
	EntryID     string          `json:"entryId"`
	AnsweredAt  string          `json:"answeredAt,omitempty"`
	AnsweredBy  string          `json:"answeredBy,omitempty"` // the answer's principal
	Reason      string          `json:"reason,omitempty"`
	// EditedArguments are an approval's edit of the arguments.
	EditedArguments json.RawMessage `json:"editedArguments,omitempty"`
	AnswerEntryID   string          `json:"answerEntryId,omitempty"`
}

// storedApproval keeps the request's time, which the API does not show as ms.
type storedApproval struct {
	Approval
	Ms int64 `json:"requestedMs"`
}

const (
	pApproval     = "ap/"  // ap/<ref>/<request entry id>
	pApprovalCall = "apc/" // apc/<ref>/<call id> → the call's last request entry id
	pApprovalTime = "apt/" // apt/<tenant>/<ms:16 hex>/<sid>/<request entry id>
)

func approvalKey(r events.SessionRef, entryID string) string {
	return pApproval + r.String() + "/" + entryID
}
func approvalCallKey(r events.SessionRef, callID string) string {
	return pApprovalCall + r.String() + "/" + callID
}
func approvalTimePrefix(tenant string) string { return pApprovalTime + tenant + "/" }
func approvalTimeKey(a *Approval) string {
	return approvalTimePrefix(a.Tenant) + msKey(a.RequestedMs) + "/" + a.Session + "/" + a.EntryID
}

type approvalState struct {
	a   *Approval
	new bool // index not yet written
}

// approvalRequested records a new request.
func (w *Writer) approvalRequested(sid events.SessionRef, e *events.Entry, ms int64) error {
	a := &Approval{Tenant: sid.Tenant, Session: sid.ID, ToolCallID: e.ToolCallID, Tool: e.ToolName, Arguments: e.Arguments,
		Status: ApprovalPending, RequestedAt: e.Timestamp, RequestedMs: ms, ExpiresAt: e.ExpiresAt, EntryID: e.ID}
	w.apprs[approvalKey(sid, e.ID)] = &approvalState{a: a, new: true}
	w.apprCalls[approvalCallKey(sid, e.ToolCallID)] = e.ID
	return nil
}

// approvalAnswered records an answer on the call's last request.
func (w *Writer) approvalAnswered(sid events.SessionRef, e *events.Entry) error {
	ck := approvalCallKey(sid, e.ToolCallID)
	reqID, ok := w.apprCalls[ck]
	if !ok {
		b, err := w.d.get([]byte(ck))
		if err != nil {
			return err
		}
		if b == nil {
			return nil // an answer with no request: nothing to show
		}
		reqID = string(b)
	}
	k := approvalKey(sid, reqID)
	st, ok := w.apprs[k]
	if !ok {
		var sa storedApproval
		found, err := w.getJSON(k, &sa)
		if err != nil || !found {
			return err
		}
		sa.Approval.RequestedMs = sa.Ms
		st = &approvalState{a: &sa.Approval}
		w.apprs[k] = st
	}
	a := st.a
	a.AnsweredAt, a.AnsweredBy, a.Reason, a.AnswerEntryID = e.Timestamp, e.Principal, e.Reason, e.ID
	switch e.Decision {
	case events.DecisionApprove:
		a.Status, a.EditedArguments = ApprovalApproved, e.Arguments
	case events.DecisionDeny:
		a.Status = ApprovalDenied
	case events.DecisionExpire:
		a.Status = ApprovalExpired
	case events.DecisionAbort:
		a.Status = ApprovalAborted
	}
	return nil
}

// prepareApprovals writes the approvals the open batch changed.
func (w *Writer) prepareApprovals() error {
	for k, st := range w.apprs {
		if err := w.setJSON(k, storedApproval{*st.a, st.a.RequestedMs}); err != nil {
			return err
		}
		if st.new {
			if err := w.b.Set([]byte(approvalTimeKey(st.a)), nil, nil); err != nil {
				return err
			}
		}
	}
	for k, id := range w.apprCalls {
		if err := w.b.Set([]byte(k), []byte(id), nil); err != nil {
			return err
		}
	}
	return nil
}

// ApprovalFilter selects approvals of one tenant. Zero fields but Tenant
// and Limit do not filter.
type ApprovalFilter struct {
	Tenant  string // required: no query reads another tenant's approvals
	Session string
	Tool    string
	Status  string
	Since   time.Time // requested at or after
	Until   time.Time // requested before
	Limit   int       // required, > 0
	Cursor  string
}

// Approvals returns the approvals matching f, oldest request first, and
// the cursor of the next page ("" at the end).
func (d *DB) Approvals(f ApprovalFilter) ([]Approval, string, error) {
	kind, prefix := "ap", approvalTimePrefix(f.Tenant)
	var lower, upper []byte
	var err error
	if f.Tenant == AllTenants {
		kind, prefix = "aP", pApprovalTime
		lower, upper, err = allBounds(prefix, kind, f.Cursor)
	} else {
		lower, upper, err = timeBounds(prefix, kind, f.Since, f.Until, f.Cursor)
	}
	if err != nil {
		return nil, "", err
	}
	r := d.read()
	defer r.close()
	it, err := r.iter(lower, upper)
	if err != nil {
		return nil, "", err
	}
	defer it.Close()
	out := []Approval{}
	scanned := 0
	var last string
	for ok := it.First(); ok; ok = it.Next() {
		if len(out) == f.Limit || scanned == maxScan {
			return out, encodeCursor(kind, last), nil
		}
		scanned++
		last = string(it.Key())
		tenant, rest := f.Tenant, strings.TrimPrefix(last, prefix)
		if tenant == AllTenants {
			var ok bool
			if tenant, rest, ok = strings.Cut(rest, "/"); !ok {
				continue
			}
		}
		if len(rest) < 18 || rest[16] != '/' {
			continue
		}
		sid, id, ok := strings.Cut(rest[17:], "/")
		if !ok || (f.Session != "" && sid != f.Session) {
			continue
		}
		var sa storedApproval
		found, err := r.getJSON(approvalKey(events.SessionRef{Tenant: tenant, ID: sid}, id), &sa)
		if err != nil {
			return nil, "", err
		}
		a := sa.Approval
		if !found || (a.Tenant != f.Tenant && f.Tenant != AllTenants) || !inTime(sa.Ms, f.Since, f.Until) || (f.Tool != "" && a.Tool != f.Tool) || (f.Status != "" && a.Status != f.Status) {
			continue
		}
		out = append(out, a)
	}
	return out, "", it.Error()
}

// inTime reports whether ms is at or after since and before until (zero
// times do not bound).
func inTime(ms int64, since, until time.Time) bool {
	t := time.UnixMilli(ms)
	return (since.IsZero() || !t.Before(since)) && (until.IsZero() || t.Before(until))
}
