package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// Key is an API key as the gateway shows it. Token is set only in the
// answer of [Client.CreateKey]: it is the key itself, shown that once.
type Key struct {
	ID        string     `json:"id"`
	Tenant    string     `json:"tenant"`
	Role      string     `json:"role"`
	Name      string     `json:"name,omitempty"`
	CreatedAt time.Time  `json:"createdAt"`
	CreatedBy string     `json:"createdBy"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
	RevokedBy string     `json:"revokedBy,omitempty"`
	Token     string     `json:"token,omitempty"`
}

// CreateKey asks for a new API key. Role is admin, tenant-admin, member or
// viewer; Tenant defaults to the caller's.
type CreateKey struct {
	Role   string `json:"role"`
	Tenant string `json:"tenant,omitempty"`
	Name   string `json:"name,omitempty"`
}

// CreateKey creates an API key and returns it with its token.
func (c *Client) CreateKey(ctx context.Context, req CreateKey) (Key, error) {
	var out Key
	_, err := c.doJSON(ctx, http.MethodPost, "/v1/keys", nil, req, &out)
	return out, err
}

// ListKeys lists API keys (never their tokens): an admin's of every tenant,
// or of tenant when it is not ""; a tenant-admin's of its own tenant.
func (c *Client) ListKeys(ctx context.Context, tenant string) ([]Key, error) {
	q := url.Values{}
	if tenant != "" {
		q.Set("tenant", tenant)
	}
	var out struct {
		Keys []Key `json:"keys"`
	}
	err := c.getJSON(ctx, "/v1/keys", q, &out)
	return out.Keys, err
}

// RevokeKey revokes the API key id on every gateway; revoking a revoked
// key returns it as it is.
func (c *Client) RevokeKey(ctx context.Context, id string) (Key, error) {
	if len(id) != 16 {
		return Key{}, fmt.Errorf("%w: key id %q: must be 16 hex digits", ErrInvalid, id)
	}
	var out Key
	_, err := c.doJSON(ctx, http.MethodDelete, "/v1/keys/"+url.PathEscape(id), nil, nil, &out)
	return out, err
}
