package client

import (
	"context"
	"net/http"
)

// SubagentLimits are a tenant's sub-agent limits (docs/subagents.md):
// MaxDepth is the deepest a sub-agent may be (0 = none), MaxFanOut the
// most task calls one batch may start.
type SubagentLimits struct {
	MaxDepth  int `json:"maxDepth"`
	MaxFanOut int `json:"maxFanOut"`
}

// SetSubagentLimits replaces tenant's sub-agent limits and returns them.
func (c *Client) SetSubagentLimits(ctx context.Context, tenant string, l SubagentLimits) (SubagentLimits, error) {
	var out SubagentLimits
	path, err := tenantPath(tenant, "/subagents")
	if err != nil {
		return out, err
	}
	_, err = c.doJSON(ctx, http.MethodPut, path, nil, l, &out)
	return out, err
}

// SubagentLimits returns tenant's sub-agent limits; the defaults when it
// set none.
func (c *Client) SubagentLimits(ctx context.Context, tenant string) (SubagentLimits, error) {
	var out SubagentLimits
	path, err := tenantPath(tenant, "/subagents")
	if err != nil {
		return out, err
	}
	err = c.getJSON(ctx, path, nil, &out)
	return out, err
}
