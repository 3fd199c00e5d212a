package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/cairn-agents/cairn/pkg/events"
)

// DefaultServer is the gateway `cairn up` serves, and where the CLI looks
// unless told otherwise (--server, CAIRN_SERVER).
const DefaultServer = "http://127.0.0.1:8080"

// Client calls one gateway's /v1 API. Build it with [New]; it is safe for
// concurrent use.
type Client struct {
	base   string
	hc     *http.Client
	header http.Header
}

// An Option configures a [Client]; it reports a value it cannot use.
type Option func(*Client) error

// WithHTTPClient makes the client send its requests through hc (timeouts,
// proxies, TLS, instrumentation). Default: a client of its own with no
// overall timeout, since event streams stay open; bound each call with its
// context instead.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) error {
		if hc == nil {
			return errors.New("client: WithHTTPClient: nil *http.Client")
		}
		c.hc = hc
		return nil
	}
}

// WithToken sends token (an API key, cairn_<id>_<secret>, or an OIDC JWT)
// as "Authorization: Bearer <token>" with every request. An empty token
// sends none. The token is not part of any error the client returns.
func WithToken(token string) Option {
	return func(c *Client) error {
		if token == "" {
			return nil
		}
		if strings.ContainsAny(token, " \t\r\n") {
			return fmt.Errorf("%w: WithToken: a token has no spaces or line breaks", ErrInvalid)
		}
		c.header.Set("Authorization", "Bearer "+token)
		return nil
	}
}

// WithHeader adds a header to every request, such as a tracing header of
// your own ([WithToken] sets Authorization).
func WithHeader(key, value string) Option {
	return func(c *Client) error {
		if key == "" || strings.ContainsAny(key, " :\r\n") || strings.ContainsAny(value, "\r\n") {
			return fmt.Errorf("client: WithHeader: %q is not a valid header", key)
		}
		c.header.Add(key, value)
		return nil
	}
}

// WithTenant makes every request act for tenant: the events.HeaderTenant
// header (docs/tenancy.md). Without it the gateway decides; until it
// authenticates principals that is the default tenant.
func WithTenant(tenant string) Option {
	return func(c *Client) error {
		if err := events.ValidateTenant(tenant); err != nil {
			return fmt.Errorf("client: WithTenant: %w", err)
		}
		c.header.Set(events.HeaderTenant, tenant)
		return nil
	}
}

// New returns a client of the gateway at server, an http or https URL
// such as [DefaultServer] (a path prefix is kept: the API is under
// server + "/v1/...").
func New(server string, opts ...Option) (*Client, error) {
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%w: server %q is not an http(s) URL such as %s", ErrInvalid, server, DefaultServer)
	}
	c := &Client{base: strings.TrimRight(server, "/"), hc: &http.Client{}, header: http.Header{}}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Server returns the gateway's base URL, as given to [New].
func (c *Client) Server() string { return c.base }

// Health asks the gateway's /healthz whether it serves; nil if it does.
func (c *Client) Health(ctx context.Context) error {
	return c.getJSON(ctx, "/healthz", nil, nil)
}

// sessionPath returns /v1/sessions/{sid}+rest after checking sid, so a
// malformed id fails here, not as a 400 or a different path.
func sessionPath(sid, rest string) (string, error) {
	if err := events.ValidateSessionID(sid); err != nil {
		return "", fmt.Errorf("%w: session id: %v", ErrInvalid, err)
	}
	return "/v1/sessions/" + url.PathEscape(sid) + rest, nil
}

// open sends a request and returns the response if its status is 2xx; any
// other status is decoded into an *Error and the body closed.
func (c *Client) open(ctx context.Context, method, path string, query url.Values, body io.Reader, contentType string, header http.Header) (*http.Response, error) {
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: %w", method, path, err)
	}
	for k, vs := range c.header {
		req.Header[k] = append([]string(nil), vs...)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("cannot reach the gateway at %s: %w", c.base, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return nil, decodeError(method, path, resp.StatusCode, data)
}

// doJSON sends in (if not nil) as JSON and decodes a JSON answer into out
// (if not nil). It returns the answer's status.
func (c *Client) doJSON(ctx context.Context, method, path string, query url.Values, in, out any) (int, error) {
	var body io.Reader
	ctype := ""
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return 0, fmt.Errorf("client: encode %s %s: %w", method, path, err)
		}
		body, ctype = bytes.NewReader(data), "application/json"
	}
	resp, err := c.open(ctx, method, path, query, body, ctype, nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, err
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, fmt.Errorf("client: reading %s %s: %w", method, path, err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return resp.StatusCode, fmt.Errorf("client: the gateway answered %s %s with invalid JSON: %w", method, path, err)
	}
	return resp.StatusCode, nil
}

func (c *Client) getJSON(ctx context.Context, path string, query url.Values, out any) error {
	_, err := c.doJSON(ctx, http.MethodGet, path, query, nil, out)
	return err
}
