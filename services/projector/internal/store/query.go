package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cairn-agents/cairn/pkg/events"
	"strings"

	"github.com/cockroachdb/pebble/v2"
)

// ErrNotFound: no such session.
var ErrNotFound = errors.New("not found")

// InvalidError is a query argument the store refuses, such as a cursor that
// does not belong to the query.
type InvalidError struct {
	Field   string
	Problem string
}

func (e *InvalidError) Error() string { return e.Field + ": " + e.Problem }

// reader is a consistent view of the database for one query.
type reader struct {
	s *pebble.Snapshot
}

func (d *DB) read() reader { return reader{s: d.db.NewSnapshot()} }

func (r reader) close() { r.s.Close() }

func (r reader) getJSON(key string, v any) (bool, error) {
	b, c, err := r.s.Get([]byte(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: get %q: %w", key, err)
	}
	defer func() { _ = c.Close() }() // releases the value; returns nil
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("store: decode %q: %w", key, err)
	}
	return true, nil
}

func (r reader) iter(lower, upper []byte) (*pebble.Iterator, error) {
	return r.s.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
}

// Session returns the summary of session sid.
func (d *DB) Session(sid events.SessionRef) (Summary, error) {
	r := d.read()
	defer r.close()
	return r.session(sid)
}

func (r reader) session(sid events.SessionRef) (Summary, error) {
	var s Summary
	found, err := r.getJSON(sessionKey(sid), &s)
	if err != nil {
		return Summary{}, err
	}
	if !found {
		return Summary{}, fmt.Errorf("%w: session %q", ErrNotFound, sid.ID)
	}
	return s, nil
}

// AllTenants as a query's tenant reads every tenant's rows, tenant by
// tenant in name order, each tenant's in the query's usual order; every
// row names its tenant. Only the gateway's platform admins ask for it.
const AllTenants = "*"

// Sessions lists tenant's sessions, newest activity first, at most limit of
// them, after cursor ("" = from the start). It returns the cursor of the
// next page, "" at the end. A cursor of another tenant's listing is
// refused like any other that is not a sessions cursor. With AllTenants
// it lists every tenant's.
func (d *DB) Sessions(tenant string, limit int, cursor string) ([]Summary, string, error) {
	prefix := activityPrefix(tenant)
	if tenant == AllTenants {
		prefix = pActivity
	}
	lower := []byte(prefix)
	if cursor != "" {
		k, err := decodeCursor(cursor, "s")
		if err != nil {
			return nil, "", err
		}
		if _, ok := activityRef(k, prefix, tenant); !ok {
			return nil, "", &InvalidError{"cursor", "is not a sessions cursor"}
		}
		lower = append([]byte(k), 0)
	}
	r := d.read()
	defer r.close()
	it, err := r.iter(lower, prefixEnd(prefix))
	if err != nil {
		return nil, "", err
	}
	defer it.Close()
	out := []Summary{}
	var last string
	for ok := it.First(); ok; ok = it.Next() {
		if len(out) == limit {
			return out, encodeCursor("s", last), nil // more follow
		}
		last = string(it.Key())
		ref, ok := activityRef(last, prefix, tenant)
		if !ok {
			continue
		}
		s, err := r.session(ref)
		if err != nil {
			return nil, "", err
		}
		out = append(out, s)
	}
	return out, "", it.Error()
}

// activityRef is the session an activity key under prefix names: the key
// is <prefix><inverted ms>/<sid>, and with AllTenants its prefix is pActivity
// followed by <tenant>/.
func activityRef(k, prefix, tenant string) (events.SessionRef, bool) {
	rest, ok := strings.CutPrefix(k, prefix)
	if !ok {
		return events.SessionRef{}, false
	}
	if tenant == AllTenants {
		if tenant, rest, ok = strings.Cut(rest, "/"); !ok {
			return events.SessionRef{}, false
		}
	}
	if len(rest) < 18 || rest[16] != '/' {
		return events.SessionRef{}, false
	}
	return events.SessionRef{Tenant: tenant, ID: rest[17:]}, true
}
