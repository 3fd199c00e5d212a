package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
)

// Budget is a tenant's budget (PUT /v1/tenants/{tenant}/budget). Zero
// means no limit.
type Budget struct {
	TokensPerDay   int64   `json:"tokensPerDay"`
	CostPerDay     float64 `json:"costPerDay"` // US dollars
	ConcurrentRuns int64   `json:"concurrentRuns"`
}

// BudgetToday is a tenant's use on the current UTC day.
type BudgetToday struct {
	Day            string  `json:"day"`    // YYYY-MM-DD
	Tokens         int64   `json:"tokens"` // settled
	Cost           float64 `json:"cost"`   // settled, USD
	Calls          int64   `json:"calls"`
	ReservedTokens int64   `json:"reservedTokens"` // by model calls in flight
	ReservedCost   float64 `json:"reservedCost"`
	Runs           int64   `json:"runs"` // runs in progress
}

// BudgetStatus is a tenant's budget with today's use.
type BudgetStatus struct {
	Tenant string `json:"tenant"`
	Budget
	Today BudgetToday `json:"today"`
}

var tenantRe = regexp.MustCompile(`^[a-z0-9-]{1,32}$`)

func tenantPath(tenant, tail string) (string, error) {
	if !tenantRe.MatchString(tenant) {
		return "", fmt.Errorf("%w: tenant: %q is not a tenant name (1-32 characters of a-z, 0-9 and -)", ErrInvalid, tenant)
	}
	return "/v1/tenants/" + tenant + tail, nil
}

// SetBudget replaces tenant's budget and returns it with today's use.
func (c *Client) SetBudget(ctx context.Context, tenant string, b Budget) (BudgetStatus, error) {
	var out BudgetStatus
	path, err := tenantPath(tenant, "/budget")
	if err != nil {
		return out, err
	}
	_, err = c.doJSON(ctx, http.MethodPut, path, nil, b, &out)
	return out, err
}

// Budget returns tenant's budget with today's use; zeros when it has none.
func (c *Client) Budget(ctx context.Context, tenant string) (BudgetStatus, error) {
	var out BudgetStatus
	path, err := tenantPath(tenant, "/budget")
	if err != nil {
		return out, err
	}
	err = c.getJSON(ctx, path, nil, &out)
	return out, err
}

// TenantUsage returns tenant's tokens and cost by day and model (GET
// /v1/tenants/{tenant}/usage); each row carries Tenant.
func (c *Client) TenantUsage(ctx context.Context, tenant string, f UsageFilter) (UsageReport, error) {
	var out UsageReport
	path, err := tenantPath(tenant, "/usage")
	if err != nil {
		return out, err
	}
	q := url.Values{}
	for k, v := range map[string]string{"since": f.Since, "until": f.Until, "model": f.Model} {
		if v != "" {
			q.Set(k, v)
		}
	}
	err = c.getJSON(ctx, path, q, &out)
	return out, err
}
