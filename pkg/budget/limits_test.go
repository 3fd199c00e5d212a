package budget_test

import (
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/budget"
)

func TestDecodeLimits(t *testing.T) {
	ok := []struct {
		in   string
		want budget.Limits
	}{
		{`{}`, budget.Limits{}},
		{`{"tokensPerDay": 10000, "costPerDay": 2.5, "concurrentRuns": 3}`, budget.Limits{TokensPerDay: 10000, CostPerDay: 2.5, ConcurrentRuns: 3}},
		{`{"tokensPerDay": null, "costPerDay": 0}`, budget.Limits{}},
		{` {"costPerDay": 1e2} ` + "\n", budget.Limits{CostPerDay: 100}},
		{`{"tokensPerDay": 1000000000000}`, budget.Limits{TokensPerDay: budget.MaxTokensPerDay}},
	}
	for _, c := range ok {
		got, err := budget.DecodeLimits([]byte(c.in))
		if err != nil || got != c.want {
			t.Errorf("%s: %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	// What a careless or hostile client may send, and the field the
	// refusal must name.
	bad := []struct{ in, names string }{
		{``, "body"},
		{`[]`, "body"},
		{`"tokensPerDay"`, "body"},
		{`{"tokensPerDay": -1}`, "tokensPerDay"},
		{`{"tokensPerDay": 1.5}`, "tokensPerDay"},
		{`{"tokensPerDay": 1e3}`, "tokensPerDay"},
		{`{"tokensPerDay": "100"}`, "tokensPerDay"},
		{`{"tokensPerDay": 1000000000001}`, "tokensPerDay"},
		{`{"tokensPerDay": 99999999999999999999999}`, "tokensPerDay"},
		{`{"costPerDay": -0.01}`, "costPerDay"},
		{`{"costPerDay": "NaN"}`, "costPerDay"},
		{`{"costPerDay": NaN}`, "costPerDay"},
		{`{"costPerDay": 1e400}`, "costPerDay"},
		{`{"costPerDay": 10000001}`, "costPerDay"},
		{`{"costPerDay": true}`, "costPerDay"},
		{`{"concurrentRuns": -3}`, "concurrentRuns"},
		{`{"concurrentRuns": 1000001}`, "concurrentRuns"},
		{`{"concurrentRuns": {}}`, "concurrentRuns"},
		{`{"tokensPerday": 5}`, "tokensPerday"},
		{`{"tenant": "other"}`, "tenant"},
		{`{"tokensPerDay": 5, "tokensPerDay": 6}`, "tokensPerDay"},
		{`{"tokensPerDay": 5} {}`, "body"},
		{`{"tokensPerDay": 5}}`, "body"},
		{`{"tokensPerDay": 5`, "body"},
	}
	for _, c := range bad {
		_, err := budget.DecodeLimits([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.names) {
			t.Errorf("%s: error %v, want one naming %s", c.in, err, c.names)
		}
	}
}

func TestValidateTenant(t *testing.T) {
	for _, s := range []string{"default", "acme", "a", "team-7", strings.Repeat("a", 32)} {
		if err := budget.ValidateTenant(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	for _, s := range []string{"", "Acme", "a.b", "a*", "a>", "a b", "../x", "é", strings.Repeat("a", 33), "a\x00"} {
		if err := budget.ValidateTenant(s); err == nil {
			t.Errorf("%q accepted as a tenant", s)
		}
	}
}

func TestExceededMessages(t *testing.T) {
	for _, c := range []struct {
		e    budget.Exceeded
		want string
	}{
		{budget.Exceeded{Tenant: "acme", Limit: budget.LimitTokens, Max: 10000, Used: 10234}, "budget exceeded: tokensPerDay 10000 used 10234 of tenant acme"},
		{budget.Exceeded{Tenant: "acme", Limit: budget.LimitTokens, Max: 10000, Used: 9000, Reserved: 1500}, "budget exceeded: tokensPerDay 10000 used 9000 reserved 1500 of tenant acme"},
		{budget.Exceeded{Tenant: "acme", Limit: budget.LimitCost, Max: 1.5, Used: 1.5234}, "budget exceeded: costPerDay 1.5 used 1.5234 of tenant acme"},
		{budget.Exceeded{Tenant: "default", Limit: budget.LimitRuns, Max: 2, Used: 2}, "budget exceeded: concurrentRuns 2 in progress 2 of tenant default"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}
