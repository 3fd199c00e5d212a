package projector

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/services/projector/internal/store"
)

// Query limits.
const (
	DefaultSessionsLimit = 50
	MaxSessionsLimit     = 1000
	DefaultEntriesLimit  = 1000
	MaxEntriesLimit      = 10000
	DefaultAuditLimit    = 100
	MaxAuditLimit        = 1000
)

// Handler serves the read-model queries of docs/api/projector-queries.md
// under /v1/, and the admin queries (admin.go: online rebuild, digest). The
// gateway mounts it as is.
func (p *Projector) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/sessions", get(p.listSessions))
	mux.HandleFunc("/v1/sessions/{id}", get(p.session))
	mux.HandleFunc("/v1/sessions/{id}/tree", get(p.tree))
	mux.HandleFunc("/v1/sessions/{id}/entries", get(p.entries))
	mux.HandleFunc("/v1/sessions/{id}/replay", get(p.replay))
	mux.HandleFunc("/v1/audit/tool-calls", get(p.audit))
	mux.HandleFunc("/v1/approvals", get(p.approvals))
	mux.HandleFunc("/v1/usage", get(p.usage))
	mux.HandleFunc("/v1/tenants/{tenant}/usage", get(p.usage))
	mux.HandleFunc(PathRebuild, p.rebuildRoute)
	mux.HandleFunc(PathDigest, get(p.digest))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no query at %s", r.URL.Path))
	})
	return mux
}

func get(h func(http.ResponseWriter, *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not allowed here; use GET")
			return
		}
		if err := h(w, r); err != nil {
			writeErr(w, err)
		}
	}
}

func (p *Projector) listSessions(w http.ResponseWriter, r *http.Request) error {
	q := parseParams(r.URL.RawQuery, "limit", "cursor")
	limit := q.intRange("limit", DefaultSessionsLimit, 1, MaxSessionsLimit)
	cursor := q.nonEmpty("cursor")
	if q.err != nil {
		return q.err
	}
	tenant, err := listTenantOf(r)
	if err != nil {
		return err
	}
	return p.answer(w, r, func(db *store.DB) (any, error) {
		list, next, err := db.Sessions(tenant, limit, cursor)
		return struct {
			Sessions   []Summary `json:"sessions"`
			NextCursor string    `json:"nextCursor,omitempty"`
		}{list, next}, err
	})
}

func (p *Projector) session(w http.ResponseWriter, r *http.Request) error {
	return p.ofSession(w, r, func(db *store.DB, ref events.SessionRef) (any, error) { return db.Session(ref) })
}

func (p *Projector) tree(w http.ResponseWriter, r *http.Request) error {
	return p.ofSession(w, r, func(db *store.DB, ref events.SessionRef) (any, error) { return db.Tree(ref) })
}

// ofSession answers a query of the session in the path that takes no
// parameters.
func (p *Projector) ofSession(w http.ResponseWriter, r *http.Request, query func(db *store.DB, ref events.SessionRef) (any, error)) error {
	sid, err := sessionID(r)
	if err != nil {
		return err
	}
	if q := parseParams(r.URL.RawQuery); q.err != nil {
		return q.err
	}
	return p.answer(w, r, func(db *store.DB) (any, error) { return query(db, sid) })
}

// answer runs query on the live read model, held until the answer is
// written, and writes its result as JSON; on an error it writes nothing.
func (p *Projector) answer(w http.ResponseWriter, r *http.Request, query func(*store.DB) (any, error)) error {
	db, done, err := p.live.acquire(r.Context())
	if err != nil {
		return err
	}
	defer done()
	v, err := query(db)
	if err != nil {
		return err
	}
	writeJSON(w, v)
	return nil
}

func (p *Projector) entries(w http.ResponseWriter, r *http.Request) error {
	sid, err := sessionID(r)
	if err != nil {
		return err
	}
	q := parseParams(r.URL.RawQuery, "after", "limit", "format")
	after := q.nonEmpty("after")
	limit := q.intRange("limit", DefaultEntriesLimit, 1, MaxEntriesLimit)
	format := q.oneOf("format", "json", "json", "jsonl")
	if q.err != nil {
		return q.err
	}
	db, done, err := p.live.acquire(r.Context())
	if err != nil {
		return err
	}
	defer done()
	afterSeq, err := resolveAfter(db, sid, after)
	if err != nil {
		return err
	}
	n := 0
	// After the header a failed write cannot be reported to the client (most
	// often gone); the first one stops the reading and the rest is skipped.
	var werr error
	write := func(b []byte) {
		if werr == nil {
			_, werr = w.Write(b)
		}
	}
	start := func() {
		if format == "jsonl" {
			w.Header().Set("Content-Type", "application/jsonl")
		} else {
			w.Header().Set("Content-Type", "application/json")
			write([]byte("["))
		}
	}
	err = db.Entries(sid, afterSeq, limit, func(seq uint64, data []byte) error {
		if n == 0 {
			start()
		} else if format == "json" {
			write([]byte(","))
		}
		n++
		// One entry a line, also one stored across lines before entries
		// were compacted where they enter (events.AppendLine).
		line, err := events.AppendLine(fmt.Appendf(nil, `{"seq":%d,"entry":`, seq), data)
		if err != nil {
			return err
		}
		line[len(line)-1] = '}'
		write(line)
		if format == "jsonl" {
			write([]byte("\n"))
		}
		return werr
	})
	if err != nil && n == 0 {
		return err
	}
	if n == 0 {
		start()
	}
	if format == "json" {
		write([]byte("]\n"))
	}
	return nil
}

// resolveAfter turns `after` into a stream sequence: an entry id of the
// session if there is one by that name, else a decimal stream sequence.
func resolveAfter(db *store.DB, sid events.SessionRef, after string) (uint64, error) {
	if after == "" {
		return 0, nil
	}
	if events.ValidateEntryID(after) != nil {
		return 0, &paramError{"after", fmt.Sprintf("must be an entry id or a stream sequence, got %q", after)}
	}
	seq, err := db.EntrySeq(sid, after)
	if err == nil {
		return seq, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return 0, err
	}
	if n, perr := strconv.ParseUint(after, 10, 64); perr == nil {
		return n, nil
	}
	return 0, err
}

func (p *Projector) audit(w http.ResponseWriter, r *http.Request) error {
	q := parseParams(r.URL.RawQuery, "tool", "session", "since", "until", "outcome", "minDuration", "limit", "cursor", "principal")
	f := store.AuditFilter{
		Principal:   q.nonEmpty("principal"),
		Tool:        q.nonEmpty("tool"),
		Session:     q.nonEmpty("session"),
		Since:       q.time("since"),
		Until:       q.time("until"),
		Outcome:     q.oneOf("outcome", "", OutcomePending, OutcomeOK, OutcomeError, OutcomeInterrupted),
		MinDuration: q.duration("minDuration"),
		Limit:       q.intRange("limit", DefaultAuditLimit, 1, MaxAuditLimit),
		Cursor:      q.nonEmpty("cursor"),
	}
	if f.Session != "" && events.ValidateSessionID(f.Session) != nil {
		q.fail("session", "%v", events.ValidateSessionID(f.Session))
	}
	if events.ValidatePrincipal("principal", f.Principal) != nil {
		q.fail("principal", "must be a principal id such as key:<key id> or oidc:<subject>, got %q", f.Principal)
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Until.After(f.Since) {
		q.fail("until", "must be after since (%s), got %s", q.str("since"), q.str("until"))
	}
	if q.err != nil {
		return q.err
	}
	var err error
	if f.Tenant, err = listTenantOf(r); err != nil {
		return err
	}
	return p.answer(w, r, func(db *store.DB) (any, error) {
		calls, next, err := db.ToolCalls(f)
		return struct {
			ToolCalls  []ToolCall `json:"toolCalls"`
			NextCursor string     `json:"nextCursor,omitempty"`
		}{calls, next}, err
	})
}

// approvals lists the caller's tenant's approval requests and their
// answers (DESIGN §11), oldest first.
func (p *Projector) approvals(w http.ResponseWriter, r *http.Request) error {
	q := parseParams(r.URL.RawQuery, "status", "session", "tool", "since", "until", "limit", "cursor")
	f := store.ApprovalFilter{
		Status:  q.oneOf("status", "", store.ApprovalPending, store.ApprovalApproved, store.ApprovalDenied, store.ApprovalExpired, store.ApprovalAborted),
		Session: q.nonEmpty("session"),
		Tool:    q.nonEmpty("tool"),
		Since:   q.time("since"),
		Until:   q.time("until"),
		Limit:   q.intRange("limit", DefaultAuditLimit, 1, MaxAuditLimit),
		Cursor:  q.nonEmpty("cursor"),
	}
	if f.Session != "" && events.ValidateSessionID(f.Session) != nil {
		q.fail("session", "%v", events.ValidateSessionID(f.Session))
	}
	if f.Tool != "" && events.ValidateToolName("tool", f.Tool) != nil {
		q.fail("tool", "%v", events.ValidateToolName("tool", f.Tool))
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Until.After(f.Since) {
		q.fail("until", "must be after since (%s), got %s", q.str("since"), q.str("until"))
	}
	if q.err != nil {
		return q.err
	}
	var err error
	if f.Tenant, err = listTenantOf(r); err != nil {
		return err
	}
	return p.answer(w, r, func(db *store.DB) (any, error) {
		list, next, err := db.Approvals(f)
		return struct {
			Approvals  []Approval `json:"approvals"`
			NextCursor string     `json:"nextCursor,omitempty"`
		}{list, next}, err
	})
}

func (p *Projector) usage(w http.ResponseWriter, r *http.Request) error {
	q := parseParams(r.URL.RawQuery, "since", "until", "model")
	f := store.UsageFilter{Since: q.day("since"), Until: q.day("until"), Model: q.nonEmpty("model")}
	if f.Since != "" && f.Until != "" && f.Until < f.Since {
		q.fail("until", "must not be before since (%s), got %s", f.Since, f.Until)
	}
	if q.err != nil {
		return q.err
	}
	var err error
	if f.Tenant, err = tenantOf(r); r.Pattern == "/v1/usage" {
		f.Tenant, err = listTenantOf(r)
	}
	if err != nil {
		return err
	}
	if t := r.PathValue("tenant"); r.Pattern == "/v1/tenants/{tenant}/usage" && t != f.Tenant {
		// The gateway sends the tenant it authorised in the header; a path
		// naming another is refused, never read.
		return &paramError{"tenant", fmt.Sprintf("%q in the path is not the request's tenant %q", t, f.Tenant)}
	}
	return p.answer(w, r, func(db *store.DB) (any, error) {
		rows, total, truncated, err := db.Usage(f)
		return struct {
			Usage     []Usage `json:"usage"`
			Total     Usage   `json:"total"`
			Truncated bool    `json:"truncated,omitempty"`
		}{rows, total, truncated}, err
	})
}

// sessionID is the session the request's path names, in the request's
// tenant: another tenant's session of that id is not it, so every route
// answers it as missing.
func sessionID(r *http.Request) (events.SessionRef, error) {
	t, err := tenantOf(r)
	if err != nil {
		return events.SessionRef{}, err
	}
	sid := r.PathValue("id")
	if err := events.ValidateSessionID(sid); err != nil {
		return events.SessionRef{}, &paramError{"id", err.Error()}
	}
	return events.SessionRef{Tenant: t, ID: sid}, nil
}

// tenantOf is the tenant a query reads: the [events.HeaderTenant] the
// gateway set (absent: the default tenant).
func tenantOf(r *http.Request) (string, error) {
	t := r.Header.Get(events.HeaderTenant)
	if t == "" {
		return events.DefaultTenant, nil
	}
	if err := events.ValidateTenant(t); err != nil {
		return "", &paramError{events.HeaderTenant, err.Error()}
	}
	return t, nil
}

// listTenantOf is tenantOf on a list route, where [AllTenants] ("*")
// reads every tenant's rows: the gateway passes it on from platform
// admins only.
func listTenantOf(r *http.Request) (string, error) {
	if r.Header.Get(events.HeaderTenant) == AllTenants {
		return AllTenants, nil
	}
	return tenantOf(r)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // after the header: the client, if gone, cannot be told
}

func writeErr(w http.ResponseWriter, err error) {
	var pe *paramError
	var ie *store.InvalidError
	switch {
	case errors.As(err, &pe):
		writeError(w, http.StatusBadRequest, "invalid_parameter", pe.Error())
	case errors.As(err, &ie):
		writeError(w, http.StatusBadRequest, "invalid_parameter", ie.Error())
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, "not_found", err.Error())
	default:
		writeError(w, http.StatusInternalServerError, "internal", err.Error())
	}
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]any{"error": map[string]string{"code": code, "message": msg}}) // as in writeJSON
}
