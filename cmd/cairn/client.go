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
	"strconv"
	"strings"

	"github.com/cairn-agents/cairn/pkg/events"
)

// client talks to a gateway.
type client struct {
	base   string
	http   *http.Client
	remote bool // a gateway the user named, not one this process started
	// quiet makes the timer after which `prompt` asks the log whether the
	// run settled; nil means a wall-clock timer of followQuiet. Tests
	// supply one they fire by hand.
	quiet func() quietTimer
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
// With resume it continues after the event id after (Last-Event-ID),
// replaying what the stream stored since.
func (c *client) sessionEvents(ctx context.Context, sid string, resume bool, after uint64) (*eventStream, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", c.base+"/v1/sessions/"+url.PathEscape(sid)+"/events", nil)
	if err != nil {
		return nil, err
	}
	if resume {
		req.Header.Set("Last-Event-ID", strconv.FormatUint(after, 10))
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

// sseItem is one dispatched field block of an event stream.
type sseItem struct {
	ID    uint64        // the block's id, if HasID
	HasID bool          //
	Event *events.Event // nil for an id-only block (the stream's position)
	Live  bool          // the ": live" comment: what follows is live
}

// next returns the next event, id-only block or live mark, or io.EOF when
// the stream ends.
func (s *eventStream) next() (sseItem, error) {
	var it sseItem
	var data string
	for s.sc.Scan() {
		line := s.sc.Text()
		switch {
		case line == "":
			if data != "" {
				ev, err := events.DecodeEvent([]byte(data))
				if err != nil {
					return sseItem{}, fmt.Errorf("invalid event from the gateway: %w", err)
				}
				it.Event = &ev
				return it, nil
			}
			if it.HasID {
				return it, nil
			}
		case line == ": live":
			return sseItem{Live: true}, nil
		case strings.HasPrefix(line, "id: "):
			n, err := strconv.ParseUint(line[len("id: "):], 10, 64)
			if err != nil {
				return sseItem{}, fmt.Errorf("invalid event id from the gateway: %q", line)
			}
			it.ID, it.HasID = n, true
		case strings.HasPrefix(line, "data: "):
			data = line[len("data: "):]
		}
	}
	if err := s.sc.Err(); err != nil {
		return sseItem{}, err
	}
	return sseItem{}, io.EOF
}

func (s *eventStream) close() { s.body.Close() }
