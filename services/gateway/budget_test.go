package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/budget"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provider/secret"
	"github.com/nats-io/nats.go/jetstream"
)

func TestBudgetSetGet(t *testing.T) {
	f := newFixture(t, nil)
	code, out := f.do(t, "GET", "/v1/tenants/acme/budget", "")
	if code != 200 || out["tenant"] != "acme" || out["tokensPerDay"] != 0.0 {
		t.Fatalf("a tenant with no budget: %d %v", code, out)
	}
	code, out = f.do(t, "PUT", "/v1/tenants/acme/budget", `{"tokensPerDay": 10000, "costPerDay": 2.5, "concurrentRuns": 4}`)
	if code != 200 || out["tokensPerDay"] != 10000.0 || out["costPerDay"] != 2.5 || out["concurrentRuns"] != 4.0 {
		t.Fatalf("PUT: %d %v", code, out)
	}
	today, _ := out["today"].(map[string]any)
	if today["day"] != budget.Day(time.Now()) || today["tokens"] != 0.0 || today["runs"] != 0.0 {
		t.Errorf("today's use: %v", today)
	}
	// A PUT replaces the whole budget.
	f.do(t, "PUT", "/v1/tenants/acme/budget", `{"costPerDay": 1}`)
	code, out = f.do(t, "GET", "/v1/tenants/acme/budget", "")
	if code != 200 || out["tokensPerDay"] != 0.0 || out["costPerDay"] != 1.0 || out["concurrentRuns"] != 0.0 {
		t.Errorf("after a second PUT: %d %v", code, out)
	}
}

// TestBudgetBadInput: what a careless or hostile client may send; each is
// 400 naming the problem, and nothing is stored.
func TestBudgetBadInput(t *testing.T) {
	f := newFixture(t, nil)
	f.do(t, "PUT", "/v1/tenants/acme/budget", `{"tokensPerDay": 7}`)
	for _, c := range []struct{ method, path, body, names string }{
		{"PUT", "/v1/tenants/acme/budget", `{"tokensPerDay": -5}`, "tokensPerDay"},
		{"PUT", "/v1/tenants/acme/budget", `{"tokensPerDay": 2.5}`, "tokensPerDay"},
		{"PUT", "/v1/tenants/acme/budget", `{"tokensPerDay": 1e30}`, "tokensPerDay"},
		{"PUT", "/v1/tenants/acme/budget", `{"costPerDay": NaN}`, "costPerDay"},
		{"PUT", "/v1/tenants/acme/budget", `{"costPerDay": "NaN"}`, "costPerDay"},
		{"PUT", "/v1/tenants/acme/budget", `{"costPerDay": 1e309}`, "costPerDay"},
		{"PUT", "/v1/tenants/acme/budget", `{"concurrentRuns": 99999999}`, "concurrentRuns"},
		{"PUT", "/v1/tenants/acme/budget", `{"tokensPerDay": 1, "owner": "me"}`, "owner"},
		{"PUT", "/v1/tenants/acme/budget", `{"tokensPerDay": 1}{"tokensPerDay": 2}`, "body"},
		{"PUT", "/v1/tenants/acme/budget", `not json`, "body"},
		{"PUT", "/v1/tenants/acme/budget", ``, "body"},
		{"PUT", "/v1/tenants/ACME/budget", `{}`, "tenant"},
		{"PUT", "/v1/tenants/a.b/budget", `{}`, "tenant"},
		{"PUT", "/v1/tenants/a%2A/budget", `{}`, "tenant"},
		{"PUT", "/v1/tenants/a%3Eb/budget", `{}`, "tenant"},
		{"PUT", "/v1/tenants/" + strings.Repeat("a", 33) + "/budget", `{}`, "tenant"},
		{"GET", "/v1/tenants/a%20b/budget", ``, "tenant"},
		{"GET", "/v1/tenants/..%2Fx/budget", ``, "tenant"},
		{"GET", "/v1/tenants/A/usage", ``, "tenant"},
	} {
		code, out := f.do(t, c.method, c.path, c.body)
		if code != http.StatusBadRequest || !strings.Contains(errMsg(out), c.names) {
			t.Errorf("%s %s %s: %d %q, want 400 naming %s", c.method, c.path, c.body, code, errMsg(out), c.names)
		}
	}
	if _, out := f.do(t, "GET", "/v1/tenants/acme/budget", ""); out["tokensPerDay"] != 7.0 {
		t.Errorf("a refused PUT changed the budget: %v", out)
	}
}

// writeHeader stores session sid's session entry with tenant.
func (f *fixture) writeHeader(t *testing.T, sid, tenant string) {
	t.Helper()
	e := events.Entry{V: events.SchemaVersion, Type: events.EntrySession, ID: sid, Timestamp: events.FormatTime(time.Now()),
		Version: events.PiVersion, Tenant: tenant}
	data, _ := json.Marshal(e)
	if tenant == "" {
		tenant = events.DefaultTenant
	}
	if _, err := f.js.Publish(context.Background(), f.n.SessionSubject(events.SessionRef{Tenant: tenant, ID: sid}), data); err != nil {
		t.Fatal(err)
	}
}

// TestPromptOverBudgetRefusedBeforeStored: a prompt to a session whose
// tenant spent its day is 429 budget_exceeded, with or without
// ?wait=applied, and never reaches the commands stream; another tenant's
// session is not affected; a refusal by the orchestrator with that code
// answers 429 as well.
func TestPromptOverBudgetRefusedBeforeStored(t *testing.T) {
	f := newFixture(t, nil)
	fakeOrchestrator(t, f)
	ctx := context.Background()
	f.writeHeader(t, "s-acme", "acme")
	f.writeHeader(t, "s-default", "")
	l, err := budget.Open(ctx, f.js, budget.Options{Owner: "test"})
	if err != nil {
		t.Fatal(err)
	}
	f.do(t, "PUT", "/v1/tenants/acme/budget", `{"tokensPerDay": 100}`)
	r, err := l.Reserve(ctx, "acme", "s-acme", budget.Limits{}, budget.Amount{Tokens: 10})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Settle(ctx, r, budget.Amount{Tokens: 150}); err != nil {
		t.Fatal(err)
	}
	stream, err := f.js.Stream(ctx, f.n.CommandsStream())
	if err != nil {
		t.Fatal(err)
	}
	before := stream.CachedInfo().State.Msgs
	want := "budget exceeded: tokensPerDay 100 used 150 of tenant acme"
	for _, c := range []struct{ path, body string }{
		{"/v1/sessions/s-acme/commands?wait=applied", `{"id":"p1","type":"prompt","text":"hello"}`},
		{"/v1/sessions/s-acme/commands", `{"id":"p2","type":"prompt","text":"hello"}`},
		{"/v1/sessions/s-acme/commands", `{"id":"p3","type":"follow_up","text":"hello"}`},
		{"/v1/sessions/s-acme/commands?wait=applied", `{"id":"p4","type":"steer","text":"hello"}`},
	} {
		req, _ := http.NewRequest("POST", f.url+c.path, strings.NewReader(c.body))
		req.Header.Set(events.HeaderTenant, "acme") // the admin acts for tenant acme
		resp, err := f.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		e, _ := out["error"].(map[string]any)
		if resp.StatusCode != http.StatusTooManyRequests || e["code"] != "budget_exceeded" || e["message"] != want {
			t.Errorf("%s %s: %d %v", c.path, c.body, resp.StatusCode, out)
		}
		if resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s: no Retry-After for a daily limit", c.body)
		}
	}
	// Commands that start no run pass.
	if code, out := f.doAs(t, "acme", "POST", "/v1/sessions/s-acme/commands?wait=applied", `{"id":"a1","type":"set_thinking_level","level":"low"}`); code != 200 {
		t.Errorf("set_thinking_level over budget: %d %v", code, out)
	}
	if code, out := f.do(t, "POST", "/v1/sessions/s-default/commands?wait=applied", `{"id":"d1","type":"prompt","text":"hello"}`); code != 200 {
		t.Errorf("another tenant's prompt: %d %v", code, out)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.State.Msgs - before; got != 2 {
		t.Errorf("%d commands stored, want 2 (the two that passed)", got)
	}

}

// TestOrchestratorBudgetRefusalIs429: a command the orchestrator refuses
// with budget_exceeded (it raced with the budget, or the gateway could
// not read it) answers 429 with ?wait=applied, as the gateway's own check.
func TestOrchestratorBudgetRefusalIs429(t *testing.T) {
	f := newFixture(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cons, err := f.js.OrderedConsumer(ctx, f.n.CommandsStream(), jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	want := "budget exceeded: concurrentRuns 1 in progress 1 of tenant default"
	cc, err := cons.Consume(func(m jetstream.Msg) {
		cmd, err := events.DecodeCommand(m.Data())
		if err != nil {
			t.Errorf("invalid command: %v", err)
			return
		}
		e := events.Entry{V: 1, Type: events.EntryCommandRejected, ID: events.DeriveID("cmd", cmd.ID), CommandID: cmd.ID,
			Timestamp: events.FormatTime(time.Now()), Reason: want, Code: budget.Code}
		data, _ := json.Marshal(e)
		ref, _ := events.SessionOf(m.Subject())
		if _, err := f.js.Publish(ctx, f.n.SessionSubject(ref), data); err != nil && ctx.Err() == nil {
			t.Errorf("append: %v", err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Stop()
	f.writeHeader(t, "s1", "")
	code, out := f.do(t, "POST", "/v1/sessions/s1/commands?wait=applied", `{"id":"o1","type":"prompt","text":"hi"}`)
	e, _ := out["error"].(map[string]any)
	if code != http.StatusTooManyRequests || e["code"] != "budget_exceeded" || e["message"] != want || out["reason"] != "budget_exceeded" {
		t.Errorf("refused by the orchestrator over budget: %d %v", code, out)
	}
}

// TestBudgetOfAnotherTenantIsMissing: below admin a principal sees only its
// own tenant's budget and usage; another tenant, existing or not, answers
// 404 with the same body, and a tenant-admin cannot set another's.
func TestBudgetOfAnotherTenantIsMissing(t *testing.T) {
	f := newFixture(t, nil)
	f.do(t, "PUT", "/v1/tenants/acme/budget", `{"tokensPerDay": 100}`)
	member, _ := f.newKey(t, f.admin, RoleMember, "beta")
	tadmin, _ := f.newKey(t, f.admin, RoleTenantAdmin, "beta")
	bearer := func(s secret.Secret) string { return "Bearer " + s.Reveal() }
	if code, out, _ := f.call(t, bearer(member), "GET", "/v1/tenants/beta/budget", ""); code != 200 {
		t.Fatalf("own budget = %d %v", code, out)
	}
	_, missing, _ := f.call(t, bearer(member), "GET", "/v1/tenants/nope/budget", "")
	for _, c := range []struct {
		who          secret.Secret
		method, path string
		body         string
	}{
		{member, "GET", "/v1/tenants/acme/budget", ""},
		{member, "GET", "/v1/tenants/acme/usage", ""},
		{tadmin, "PUT", "/v1/tenants/acme/budget", `{"tokensPerDay": 1}`},
	} {
		code, out, _ := f.call(t, bearer(c.who), c.method, c.path, c.body)
		if code != 404 || errCode(out) != "not_found" {
			t.Errorf("%s %s = %d %v, want 404", c.method, c.path, code, out)
		}
		if strings.Replace(errMsg(out), "acme", "nope", 1) != errMsg(missing) {
			t.Errorf("%s %s: %q differs from a missing tenant's %q", c.method, c.path, errMsg(out), errMsg(missing))
		}
	}
	if _, out := f.do(t, "GET", "/v1/tenants/acme/budget", ""); out["tokensPerDay"] != 100.0 {
		t.Errorf("a refused PUT changed acme's budget: %v", out)
	}
}
