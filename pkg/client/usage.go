package client

import (
	"context"
	"net/url"
)

// Usage sums the model calls of one model on one UTC day.
type Usage struct {
	Tenant string  `json:"tenant,omitempty"` // the rows' tenant; "" in a total
	Day    string  `json:"day"`              // YYYY-MM-DD; "" in a total
	Model  string  `json:"model"`            // provider/model; "" in a total
	Calls  int64   `json:"calls"`
	Tokens Tokens  `json:"tokens"`
	Cost   float64 `json:"cost"`
	// ByPrincipal splits the row by who sent the prompts ("key:<id>",
	// "oidc:<sub>"); absent in a total.
	ByPrincipal map[string]PrincipalUsage `json:"byPrincipal,omitempty"`
}

// PrincipalUsage is one principal's part of a usage row.
type PrincipalUsage struct {
	Calls  int64   `json:"calls"`
	Tokens Tokens  `json:"tokens"`
	Cost   float64 `json:"cost"`
}

// UsageFilter selects rows of GET /v1/usage. Zero fields do not filter.
type UsageFilter struct {
	Since, Until string // days as YYYY-MM-DD, inclusive
	Model        string // provider/model
}

// UsageReport holds the rows in day then model order and their total.
type UsageReport struct {
	Usage []Usage `json:"usage"`
	Total Usage   `json:"total"`
	// Truncated: more rows matched than the gateway returns at once.
	Truncated bool `json:"truncated,omitempty"`
}

// Usage returns tokens and cost by model and day.
func (c *Client) Usage(ctx context.Context, f UsageFilter) (UsageReport, error) {
	q := url.Values{}
	for k, v := range map[string]string{"since": f.Since, "until": f.Until, "model": f.Model} {
		if v != "" {
			q.Set(k, v)
		}
	}
	var out UsageReport
	err := c.getJSON(ctx, "/v1/usage", q, &out)
	return out, err
}
