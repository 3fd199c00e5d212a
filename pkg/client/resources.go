package client

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// Resource is a skill or prompt template of the caller's tenant
// (docs/resources.md).
type Resource struct {
	Kind                   string    `json:"kind"`
	Name                   string    `json:"name"`
	Description            string    `json:"description"`
	Version                uint64    `json:"version"`
	Updated                time.Time `json:"updated"`
	Text                   string    `json:"text,omitempty"`
	DisableModelInvocation bool      `json:"disableModelInvocation,omitempty"`
}

// Resource kinds, as the API names them.
const (
	KindSkill    = "skill"
	KindTemplate = "template"
)

func resourcePath(kind string) string {
	if kind == "system" {
		return "/v1/system-prompt" // the tenant's base and append parts
	}
	return "/v1/" + kind + "s"
}

// PutResource stores text as the tenant's resource kind ("skill",
// "template", or "system" with name base or append) named name and returns it with its new version. Text the
// gateway refuses is an error naming the line and the reason.
func (c *Client) PutResource(ctx context.Context, kind, name, text string) (Resource, error) {
	var out Resource
	_, err := c.doJSON(ctx, http.MethodPut, resourcePath(kind)+"/"+url.PathEscape(name), nil, map[string]string{"text": text}, &out)
	return out, err
}

// GetResource returns the tenant's resource with its text.
func (c *Client) GetResource(ctx context.Context, kind, name string) (Resource, error) {
	var out Resource
	err := c.getJSON(ctx, resourcePath(kind)+"/"+url.PathEscape(name), nil, &out)
	return out, err
}

// DeleteResource deletes the tenant's resource.
func (c *Client) DeleteResource(ctx context.Context, kind, name string) error {
	_, err := c.doJSON(ctx, http.MethodDelete, resourcePath(kind)+"/"+url.PathEscape(name), nil, nil, nil)
	return err
}

// ListResources lists the tenant's resources of kind, by name, without text.
func (c *Client) ListResources(ctx context.Context, kind string) ([]Resource, error) {
	out := map[string][]Resource{}
	err := c.getJSON(ctx, resourcePath(kind), nil, &out)
	return out[kind+"s"], err
}
