package projector

import (
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// paramError is a query parameter the API refuses: 400 invalid_parameter.
type paramError struct {
	name, problem string
}

func (e *paramError) Error() string { return e.name + ": " + e.problem }

// params reads a request's query strictly: a name not allowed or given twice
// is an error, and so is a value that does not parse.
type params struct {
	q   url.Values
	err error
}

func parseParams(raw string, allowed ...string) *params {
	p := &params{}
	q, err := url.ParseQuery(raw)
	if err != nil {
		p.err = &paramError{"query", "does not parse: " + err.Error()}
		return p
	}
	p.q = q
	for name, vs := range q {
		ok := false
		for _, a := range allowed {
			ok = ok || a == name
		}
		if !ok {
			p.fail(name, "unknown parameter (this query takes %v)", allowed)
		} else if len(vs) > 1 {
			p.fail(name, "given %d times; give it once", len(vs))
		}
	}
	return p
}

func (p *params) fail(name, format string, args ...any) {
	if p.err == nil {
		p.err = &paramError{name, fmt.Sprintf(format, args...)}
	}
}

func (p *params) str(name string) string { return p.q.Get(name) }

func (p *params) has(name string) bool { return p.q.Has(name) }

// intRange returns the integer parameter, def when absent.
func (p *params) intRange(name string, def, lo, hi int) int {
	if !p.has(name) {
		return def
	}
	s := p.q.Get(name)
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		p.fail(name, "must be an integer from %d to %d, got %q", lo, hi, s)
		return def
	}
	return n
}

func (p *params) oneOf(name, def string, options ...string) string {
	if !p.has(name) {
		return def
	}
	s := p.q.Get(name)
	for _, o := range options {
		if s == o {
			return s
		}
	}
	p.fail(name, "must be one of %v, got %q", options, s)
	return def
}

func (p *params) time(name string) time.Time {
	if !p.has(name) {
		return time.Time{}
	}
	s := p.q.Get(name)
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		p.fail(name, "must be an RFC 3339 time such as 2026-01-02T15:04:05Z, got %q", s)
	}
	return t
}

func (p *params) day(name string) string {
	if !p.has(name) {
		return ""
	}
	s := p.q.Get(name)
	if _, err := time.Parse(time.DateOnly, s); err != nil {
		p.fail(name, "must be a day as YYYY-MM-DD, got %q", s)
		return ""
	}
	return s
}

func (p *params) duration(name string) time.Duration {
	if !p.has(name) {
		return 0
	}
	s := p.q.Get(name)
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		p.fail(name, "must be a non-negative duration such as 250ms or 2s, got %q", s)
		return 0
	}
	return d
}

func (p *params) nonEmpty(name string) string {
	s := p.q.Get(name)
	if p.has(name) && s == "" {
		p.fail(name, "is empty; leave it out to not filter")
	}
	return s
}
