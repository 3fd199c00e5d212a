package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/cairn-agents/cairn/pkg/events"
)

// client talks to a gateway.
type client struct {
	base   string
	http   *http.Client
	remote bool // a gateway the user named, not one this process started
}

func newClient(server string) (*client, error) {
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usagef("--server: %q is not an http(s) URL", server)
	}
	return &client{base: strings.TrimRight(server, "/"), http: &http.Client{}, remote: true}, nil
}

// apiError is an error the gateway answered with.
type apiError struct {
	Status  int
	Code    string
	Message string
}

func (e *apiError) Error() string { return fmt.Sprintf("%s (%d %s)", e.Message, e.Status, e.Code) }

// do sends a JSON request and decodes a JSON answer into out (if not nil).
func (c *client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach the gateway at %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil && e.Error.Message != "" {
			return &apiError{Status: resp.StatusCode, Code: e.Error.Code, Message: e.Error.Message}
		}
		return &apiError{Status: resp.StatusCode, Message: strings.TrimSpace(string(data))}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("gateway answered %s %s with invalid JSON: %w", method, path, err)
		}
	}
	return nil
}

// sessionEvents opens the live event stream of sid. The stream is
// subscribed when it returns, so events of commands sent afterwards are seen.
func (c *client) sessionEvents(ctx context.Context, sid string) (*eventStream, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", c.base+"/v1/sessions/"+url.PathEscape(sid)+"/events", nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the gateway at %s: %w", c.base, err)
	}
	if resp.StatusCode != 200 {
		resp.Body.Close()
		return nil, &apiError{Status: resp.StatusCode, Message: "cannot follow the session's events"}
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	return &eventStream{body: resp.Body, sc: sc}, nil
}

type eventStream struct {
	body io.ReadCloser
	sc   *bufio.Scanner
}

// next returns the next event, or io.EOF when the stream ends.
func (s *eventStream) next() (events.Event, error) {
	for s.sc.Scan() {
		line := s.sc.Text()
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		ev, err := events.DecodeEvent([]byte(data))
		if err != nil {
			return events.Event{}, fmt.Errorf("invalid event from the gateway: %w", err)
		}
		return ev, nil
	}
	if err := s.sc.Err(); err != nil {
		return events.Event{}, err
	}
	return events.Event{}, io.EOF
}

func (s *eventStream) close() { s.body.Close() }
