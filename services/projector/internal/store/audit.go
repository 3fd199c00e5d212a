package store

import (
	"github.com/cairn-agents/cairn/pkg/events"
	"strings"
	"time"
)

// AuditFilter selects tool calls of one tenant. Zero fields but Tenant do
// not filter.
type AuditFilter struct {
	Tenant      string // required: no query reads another tenant's calls
	Tool        string
	Session     string
	Since       time.Time // calls started at or after
	Until       time.Time // calls started before
	Outcome     string
	Principal   string // who sent the user message the call answers
	MinDuration time.Duration
	Limit       int    // required, > 0
	Cursor      string // from a previous page of the same query
}

// maxScan bounds the index keys one audit page reads, so a filter that
// matches little cannot make one request scan everything; a page may then
// hold fewer than Limit calls and still carry a cursor.
const maxScan = 10000

// ToolCalls returns tool calls matching f in order of their start time, and
// the cursor of the next page ("" at the end). It reads the by-session index
// when f.Session is set, else the by-tool index when f.Tool is set, else the
// by-time index.
func (d *DB) ToolCalls(f AuditFilter) ([]ToolCall, string, error) {
	var prefix, kind string
	switch {
	case f.Tenant == AllTenants:
		// Every tenant's calls, by time within each; the filters are
		// matched on the rows.
		prefix, kind = pByTime, "aA"
	case f.Session != "":
		prefix, kind = bySessionPrefix(events.SessionRef{Tenant: f.Tenant, ID: f.Session}), "as"
	case f.Tool != "":
		prefix, kind = byToolPrefix(f.Tenant, f.Tool), "at"
	default:
		prefix, kind = byTimePrefix(f.Tenant), "aT"
	}
	var lower, upper []byte
	var err error
	if f.Tenant == AllTenants {
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
	out := []ToolCall{}
	scanned := 0
	var last string
	for ok := it.First(); ok; ok = it.Next() {
		if len(out) == f.Limit || scanned == maxScan {
			return out, encodeCursor(kind, last), nil
		}
		scanned++
		last = string(it.Key())
		tenant, rest := f.Tenant, strings.TrimPrefix(string(it.Key()), prefix)
		if tenant == AllTenants {
			if tenant, rest, ok = strings.Cut(rest, "/"); !ok {
				continue
			}
		}
		sid, id, ok := parseCallIndex(kind, f.Session, rest)
		if !ok {
			continue
		}
		var c ToolCall
		found, err := r.getJSON(callKey(events.SessionRef{Tenant: tenant, ID: sid}, id), &c)
		if err != nil {
			return nil, "", err
		}
		if !found || !f.match(&c) {
			continue
		}
		out = append(out, c)
	}
	return out, "", it.Error()
}

func (f *AuditFilter) match(c *ToolCall) bool {
	started := time.UnixMilli(c.StartedMs)
	return (c.Tenant == f.Tenant || f.Tenant == AllTenants) &&
		(f.Since.IsZero() || !started.Before(f.Since)) && (f.Until.IsZero() || started.Before(f.Until)) &&
		(f.Tool == "" || c.Tool == f.Tool) &&
		(f.Session == "" || c.Session == f.Session) &&
		(f.Outcome == "" || c.Outcome == f.Outcome) &&
		(f.Principal == "" || c.Principal == f.Principal) &&
		(f.MinDuration == 0 || time.Duration(c.DurationMs)*time.Millisecond >= f.MinDuration)
}

// parseCallIndex splits the part of an index key after its prefix:
// "<ms>/<call id>" for the session index, "<ms>/<sid>/<call id>" otherwise.
func parseCallIndex(kind, sid, rest string) (string, string, bool) {
	if len(rest) < 18 || rest[16] != '/' {
		return "", "", false
	}
	rest = rest[17:]
	if kind == "as" {
		return sid, rest, true
	}
	s, id, ok := strings.Cut(rest, "/")
	return s, id, ok
}
