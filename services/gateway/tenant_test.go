package gateway

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
)

// doAs is a request acting for tenant ("" sends no tenant header).
func (f *fixture) doAs(t *testing.T, tenant, method, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, f.url+path, strings.NewReader(body))
	if tenant != "" {
		req.Header.Set(events.HeaderTenant, tenant)
	}
	resp, err := f.hc.Do(req) // as the admin, who may act for any tenant
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// answer is what a client sees of a response: its status, its headers
// but Date, and its body. An event stream's body is not read (it would not
// end): its Content-Type says what it is.
type answer struct {
	code   int
	header http.Header
	body   string
}

func (a answer) String() string { return fmt.Sprintf("%d %v %s", a.code, a.header, a.body) }

func (a answer) same(b answer) bool {
	return a.code == b.code && a.body == b.body && maps.EqualFunc(a.header, b.header, slices.Equal)
}

// probeAs sends a request acting for tenant, with header h (name: value)
// when it is not "".
func (f *fixture) probeAs(t *testing.T, tenant, method, path, h, body string) answer {
	t.Helper()
	req, _ := http.NewRequest(method, f.url+path, strings.NewReader(body))
	if tenant != "" {
		req.Header.Set(events.HeaderTenant, tenant)
	}
	if name, value, ok := strings.Cut(h, ": "); ok {
		req.Header.Set(name, value)
	}
	resp, err := f.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	a := answer{code: resp.StatusCode, header: resp.Header.Clone()}
	a.header.Del("Date")
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		data, _ := io.ReadAll(resp.Body)
		a.body = string(data)
	}
	return a
}

// An attacker's notes: tenant beta asks, through every route, for tenant
// acme's session s1. Each answer must be byte for byte the one beta got
// before acme's s1 existed (a missing session). The table must name every
// route the gateway serves: a new route without a tenancy case fails here.
func TestAnotherTenantsSessionIsMissing(t *testing.T) {
	var log session.Log
	var mu sync.Mutex
	var seen []string // tenants the read queries reached the projector with
	queries := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get(events.HeaderTenant))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"code":"not_found","message":"session \"s1\""}}`))
	})
	f := newFixture(t, func(c *Config) {
		l, err := session.NewJetStreamLog(context.Background(), c.JetStream)
		if err != nil {
			t.Fatal(err)
		}
		log, c.Log, c.Queries = l, l, queries
	})
	type probe struct{ method, path, header, body string }
	read := map[string][]probe{ // the routes that read one session of the caller's tenant
		"GET /v1/sessions/{id}/context":              {{"GET", "/v1/sessions/s1/context", "", ""}},
		"GET /v1/sessions/{id}/export":               {{"GET", "/v1/sessions/s1/export", "", ""}},
		"GET /v1/sessions/{id}/records":              {{"GET", "/v1/sessions/s1/records", "", ""}},
		"GET /v1/sessions/{id}/commands/{commandId}": {{"GET", "/v1/sessions/s1/commands/c1", "", ""}},
		"GET /v1/sessions/{id}/replay":               {{"GET", "/v1/sessions/s1/replay", "", ""}},
		"GET /v1/sessions/{id}":                      {{"GET", "/v1/sessions/s1", "", ""}},
		"GET /v1/sessions/{id}/entries":              {{"GET", "/v1/sessions/s1/entries?after=1", "", ""}},
		"GET /v1/sessions/{id}/tree":                 {{"GET", "/v1/sessions/s1/tree", "", ""}},
		"GET /v1/sessions/{id}/events": { // SSE: fresh, resumed by header and by cursor
			{"GET", "/v1/sessions/s1/events", "", ""},
			{"GET", "/v1/sessions/s1/events", "Last-Event-ID: 0", ""},
			{"GET", "/v1/sessions/s1/events?after=0", "", ""},
			{"GET", "/v1/sessions/s1/events?from=start", "Accept: text/event-stream", ""},
			// s2 has a create of acme's stored, not applied: an event
			// stream of acme's, opened before the session is written.
			{"GET", "/v1/sessions/s2/events", "", ""},
			{"GET", "/v1/sessions/s2/events", "Last-Event-ID: 0", ""},
		},
	}
	// Routes whose tenancy another test covers, or that name no session.
	other := map[string]string{
		"POST /v1/sessions":                  "creates in the caller's tenant: TestCreateIsTheCallersTenants",
		"POST /v1/sessions/{id}/commands":    "probed above with wait=applied",
		"POST /v1/import":                    "imports into the caller's tenant: TestCreateIsTheCallersTenants",
		"GET /v1/sessions":                   "the projector's, with the tenant header (checked below)",
		"GET /v1/audit/tool-calls":           "the projector's, with the tenant header",
		"GET /v1/usage":                      "the projector's, with the tenant header",
		"GET /v1/openapi.json":               "no tenant data",
		"GET /healthz":                       "no tenant data",
		"GET /readyz":                        "no tenant data",
		"GET /metrics":                       "no tenant data",
		"POST /v1/admin/projector/rebuild":   "platform admin",
		"GET /v1/admin/projector/rebuild":    "platform admin",
		"GET /v1/admin/projector/digest":     "platform admin",
		"PUT /v1/tenants/{tenant}/budget":    "names its tenant: TestBudgetOfAnotherTenantIsMissing",
		"GET /v1/tenants/{tenant}/budget":    "names its tenant: TestBudgetOfAnotherTenantIsMissing",
		"GET /v1/tenants/{tenant}/usage":     "names its tenant: TestBudgetOfAnotherTenantIsMissing",
		"POST /v1/keys":                      "a tenant-admin's keys are its tenant's: TestRolesRefused",
		"GET /v1/keys":                       "a tenant-admin lists its tenant's keys: TestRolesRefused",
		"DELETE /v1/keys/{id}":               "another tenant's key is not found: TestRolesRefused",
		"GET /v1/skills":                     "the caller's tenant's only: TestResourcesOfAnotherTenantAreMissing",
		"GET /v1/skills/{name}":              "another tenant's is not found: TestResourcesOfAnotherTenantAreMissing",
		"PUT /v1/skills/{name}":              "stored in the caller's tenant: TestResourcesOfAnotherTenantAreMissing",
		"DELETE /v1/skills/{name}":           "another tenant's is not found: TestResourcesOfAnotherTenantAreMissing",
		"GET /v1/templates":                  "the caller's tenant's only: TestResourcesOfAnotherTenantAreMissing",
		"GET /v1/templates/{name}":           "another tenant's is not found: TestResourcesOfAnotherTenantAreMissing",
		"PUT /v1/templates/{name}":           "stored in the caller's tenant: TestResourcesOfAnotherTenantAreMissing",
		"DELETE /v1/templates/{name}":        "another tenant's is not found: TestResourcesOfAnotherTenantAreMissing",
		"GET /v1/system-prompt":              "the caller's tenant's only: TestResourcesOfAnotherTenantAreMissing",
		"GET /v1/system-prompt/{name}":       "another tenant's is not found: TestResourcesOfAnotherTenantAreMissing",
		"PUT /v1/system-prompt/{name}":       "stored in the caller's tenant: TestResourcesOfAnotherTenantAreMissing",
		"DELETE /v1/system-prompt/{name}":    "another tenant's is not found: TestResourcesOfAnotherTenantAreMissing",
		"GET /v1/approvals":                  "the projector's, with the tenant header: TestApprovalsReadModel lists none of another tenant's",
		"PUT /v1/tenants/{tenant}/approvals": "names its tenant: TestTenantApprovalsOfAnotherTenantAreMissing",
		"GET /v1/tenants/{tenant}/approvals": "names its tenant: TestTenantApprovalsOfAnotherTenantAreMissing",
		"PUT /v1/tenants/{tenant}/subagents": "names its tenant: TestTenantSubagentLimits",
		"GET /v1/tenants/{tenant}/subagents": "names its tenant: TestTenantSubagentLimits",
	}
	for _, p := range f.g.patterns {
		if _, ok := read[p]; !ok && other[p] == "" {
			t.Errorf("route %s has no tenancy case in this test", p)
		}
	}
	before := map[probe]answer{}
	for name, prs := range read {
		for _, pr := range prs {
			a := f.probeAs(t, "beta", pr.method, pr.path, pr.header, pr.body)
			before[pr] = a
			if a.code != http.StatusNotFound && a.code != http.StatusConflict {
				t.Errorf("%s %v for a missing session = %v", name, pr, a)
			}
		}
	}
	// The event stream of a missing session answers as the log's JSON
	// routes do: same status, headers and body.
	missing := f.probeAs(t, "beta", "GET", "/v1/sessions/s1/context", "", "")
	for _, pr := range read["GET /v1/sessions/{id}/events"] {
		if a := before[pr]; !a.same(answer{missing.code, missing.header, strings.ReplaceAll(missing.body, "s1", strings.Split(pr.path, "/")[3])}) {
			t.Errorf("events %v of a missing session = %v, want what /context answers: %v", pr, a, missing)
		}
	}
	f.created(t, "acme", "s2")
	s, err := session.Create(context.Background(), log, events.Entry{ID: "s1", Tenant: "acme", Model: "scripted/demo"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(context.Background(), events.Entry{Type: events.EntryMessage, CommandID: "c1",
		Message: &events.Message{Role: events.RoleUser, Content: events.TextContent("secret of acme"), CommandID: "c1"}}); err != nil {
		t.Fatal(err)
	}
	for name, prs := range read {
		for _, pr := range prs {
			a := f.probeAs(t, "beta", pr.method, pr.path, pr.header, pr.body)
			if !a.same(before[pr]) || strings.Contains(a.body, "acme") {
				t.Errorf("%s %v: beta got %v for acme's session, and %v for a missing one", name, pr, a, before[pr])
			}
		}
	}
	// acme itself reads its session, and follows both streams.
	if code, body := f.doAs(t, "acme", "GET", "/v1/sessions/s1/context", ""); code != http.StatusOK || !strings.Contains(body, "secret of acme") {
		t.Errorf("acme's own context = %d %s", code, body)
	}
	for _, pr := range read["GET /v1/sessions/{id}/events"] {
		if a := f.probeAs(t, "acme", pr.method, pr.path, pr.header, pr.body); a.code != http.StatusOK || a.header.Get("Content-Type") != "text/event-stream" {
			t.Errorf("acme's own events %v = %v", pr, a)
		}
	}
	mu.Lock()
	for _, tn := range seen {
		if tn != "beta" {
			t.Errorf("a query of beta reached the projector as tenant %q", tn)
		}
	}
	mu.Unlock()
	// The header is checked like any input, and a client cannot smuggle
	// a second value past the one the gateway sets.
	for _, bad := range []string{"Acme", "a.b", "a*", strings.Repeat("x", 33), "../x"} {
		if code, body := f.doAs(t, bad, "GET", "/v1/sessions/s1/context", ""); code != http.StatusBadRequest || !strings.Contains(body, events.HeaderTenant) {
			t.Errorf("tenant %q: %d %s, want 400 naming the header", bad, code, body)
		}
	}
	req, _ := http.NewRequest("GET", f.url+"/v1/sessions", nil)
	req.Header.Add(events.HeaderTenant, "beta")
	req.Header.Add(events.HeaderTenant, "acme")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	if last := seen[len(seen)-1]; last != "beta" {
		t.Errorf("two tenant headers reached the projector as %q, want the first only", last)
	}
	mu.Unlock()
}

// A create and an import are the caller's tenant's: the command goes to
// <prefix>.cmd.<tenant>.<sid>, an imported session is written under the
// tenant, and one recording another tenant is refused.
func TestCreateIsTheCallersTenants(t *testing.T) {
	f, log := newLogFixture(t)
	for _, tenant := range []string{"acme", "beta"} {
		if code, body := f.doAs(t, tenant, "POST", "/v1/sessions", `{"id":"s1"}`); code != http.StatusCreated {
			t.Fatalf("%s's create = %d %s", tenant, code, body)
		}
	}
	st, err := f.js.Stream(context.Background(), f.n.CommandsStream())
	if err != nil {
		t.Fatal(err)
	}
	for _, tenant := range []string{"acme", "beta"} {
		// Same id, same default command id: two commands, one per tenant.
		if _, err := st.GetLastMsgForSubject(context.Background(), "cairn.cmd.*."+tenant+".s1"); err != nil {
			t.Errorf("%s's create is not on its subject: %v", tenant, err)
		}
	}
	pi := `{"type":"session","version":3,"id":"p1","timestamp":"2026-11-01T10:00:00.000Z","cwd":"/w"}` + "\n"
	if code, body := f.doAs(t, "acme", "POST", "/v1/import", pi); code != http.StatusCreated {
		t.Fatalf("import = %d %s", code, body)
	}
	if s, err := session.Load(context.Background(), log, events.SessionRef{Tenant: "acme", ID: "p1"}); err != nil || s.Header().Tenant != "acme" {
		t.Fatalf("imported session: %v", err)
	}
	if recs, _ := log.Read(context.Background(), events.DefaultRef("p1"), 0); len(recs) != 0 {
		t.Fatal("the import reached the default tenant")
	}
	other := `{"type":"session","version":3,"id":"p2","timestamp":"2026-11-01T10:00:00.000Z","tenant":"beta"}` + "\n"
	if code, body := f.doAs(t, "acme", "POST", "/v1/import", other); code != http.StatusBadRequest || !strings.Contains(body, `tenant \"beta\"`) {
		t.Errorf("importing beta's session as acme = %d %s, want 400", code, body)
	}
}
