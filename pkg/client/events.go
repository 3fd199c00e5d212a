package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
)

// DefaultReconnectFor is how long an [EventStream] keeps trying to resume
// a dropped connection unless FollowOptions says otherwise.
const DefaultReconnectFor = time.Minute

// FollowOptions says where an event stream starts and how it resumes.
type FollowOptions struct {
	// Replay asks for the events the stream still stores after event id
	// After (0: every one) before the live ones, as a client resuming
	// with Last-Event-ID does. Without it the stream starts at the present:
	// open it before sending a command to see every event of the command.
	Replay bool
	After  uint64
	// ReconnectFor bounds how long a dropped connection is retried, from
	// the moment it dropped, with pauses growing from 100 ms to 2 s.
	// 0: DefaultReconnectFor; negative: a dropped connection ends the
	// stream.
	ReconnectFor time.Duration
}

// StreamEvent is one item of an [EventStream]: an agent event with its id,
// or a mark (Live set, ID 0, Event zero).
type StreamEvent struct {
	// ID is the event's id, its sequence in CAIRN_EVENTS; ids only grow.
	ID uint64
	// Event is the agent event.
	Event events.Event
	// Live marks the point where the events the gateway had stored when
	// the connection opened have all been delivered: what follows is live.
	Live bool
	// Resumed, on a Live mark, says the connection had dropped and was
	// reopened since the previous Live mark: events may have been lost
	// while it was down only if the stream no longer stored them (its max
	// age). Ask the log ([Client.CommandStatus]) to learn what happened.
	Resumed bool
}

// EventStream follows a session's live agent events (SSE). A dropped
// connection is resumed with Last-Event-ID after the last event delivered:
// no event is delivered twice, and none the stream still stores is
// skipped. Next must be called from one goroutine; Close may be called
// from any.
type EventStream struct {
	c    *Client
	sid  string
	path string
	ctx  context.Context
	opts FollowOptions

	mu     sync.Mutex
	cancel context.CancelFunc // the current connection's
	body   io.ReadCloser
	closed bool

	sc      *bufio.Scanner
	last    uint64 // the highest id delivered, or the position the stream started at
	known   bool   // last is known
	resumed bool   // a reconnect happened since the last Live mark
	reconns int
	// brokenSince is when the connection dropped with nothing delivered
	// since; pause is the wait before the next attempt, grown on each
	// attempt and reset by an event, so a gateway that accepts and drops
	// connections at once is not called in a busy loop.
	brokenSince time.Time
	pause       time.Duration
}

// FollowEvents opens session sid's event stream (GET .../events). It
// returns once the gateway has subscribed, so the events of a command sent
// afterwards are all seen. A session the gateway does not know (no log, no
// stored create; another tenant's included) is ErrNotFound: open the stream
// after CreateSession, with or without WaitApplied. Cancelling ctx ends the stream: a blocked Next
// returns ctx's error. Close it when done.
func (c *Client) FollowEvents(ctx context.Context, sid string, opts FollowOptions) (*EventStream, error) {
	path, err := sessionPath(sid, "/events")
	if err != nil {
		return nil, err
	}
	if opts.ReconnectFor == 0 {
		opts.ReconnectFor = DefaultReconnectFor
	}
	s := &EventStream{c: c, sid: sid, path: path, ctx: ctx, opts: opts, last: opts.After, known: opts.Replay}
	if err := s.connect(); err != nil {
		return nil, err
	}
	if !opts.Replay {
		// A fresh stream first names its position (an id-only block): read
		// it now, so a connection lost before the first event resumes from
		// there.
		if _, err := s.read(); err != nil {
			s.Close()
			return nil, fmt.Errorf("client: event stream of %s: %w", sid, err)
		}
		if !s.known {
			s.Close()
			return nil, fmt.Errorf("client: event stream of %s did not start with its position", sid)
		}
	}
	return s, nil
}

// LastID returns the id of the last event delivered, or the position the
// stream started at: what to resume after (FollowOptions.After) with a new
// stream. Call it from the goroutine that calls Next.
func (s *EventStream) LastID() uint64 { return s.last }

// Reconnects returns how many times the stream has reopened its
// connection. Call it from the goroutine that calls Next.
func (s *EventStream) Reconnects() int { return s.reconns }

// Close ends the stream; a blocked Next returns ErrClosed.
func (s *EventStream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.cancel != nil {
		s.cancel()
	}
	if s.body != nil {
		s.body.Close()
	}
	return nil
}

func (s *EventStream) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// connect opens one connection, resuming after s.last if it is known.
func (s *EventStream) connect() error {
	ctx, cancel := context.WithCancel(s.ctx)
	h := http.Header{"Accept": {"text/event-stream"}}
	if s.known {
		h.Set("Last-Event-ID", strconv.FormatUint(s.last, 10))
	}
	resp, err := s.c.open(ctx, http.MethodGet, s.path, nil, nil, "", h)
	if err != nil {
		cancel()
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		cancel()
		resp.Body.Close()
		return ErrClosed
	}
	s.cancel, s.body = cancel, resp.Body
	s.sc = bufio.NewScanner(resp.Body)
	s.sc.Buffer(make([]byte, 64<<10), 16<<20)
	return nil
}

func (s *EventStream) drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		s.cancel()
	}
	if s.body != nil {
		s.body.Close()
	}
	s.cancel, s.body, s.sc = nil, nil, nil
}

// Next returns the next event or mark. It blocks until one comes,
// reconnecting as FollowOptions says when the connection drops; it fails
// when the stream is closed (ErrClosed), ctx ends (ctx's error), the
// gateway refuses to resume (an *Error), or resuming fails for longer
// than ReconnectFor.
func (s *EventStream) Next() (StreamEvent, error) {
	for {
		if s.sc == nil {
			if err := s.reconnect(); err != nil {
				return StreamEvent{}, err
			}
		}
		ev, err := s.read()
		if err == nil {
			if ev.ID != 0 {
				s.pause = 0
			}
			if ev.Live || ev.ID != 0 {
				s.brokenSince = time.Time{}
				return ev, nil
			}
			continue // a position only
		}
		if s.isClosed() {
			return StreamEvent{}, ErrClosed
		}
		if s.ctx.Err() != nil {
			return StreamEvent{}, s.ctx.Err()
		}
		s.drop()
		var bad *badStream
		if errors.As(err, &bad) || s.opts.ReconnectFor < 0 {
			return StreamEvent{}, fmt.Errorf("client: event stream of %s: %w", s.sid, err)
		}
		if s.brokenSince.IsZero() {
			s.brokenSince = time.Now()
		}
	}
}

// badStream is a stream the gateway wrote that cannot be read: resuming
// would not help.
type badStream struct{ msg string }

func (e *badStream) Error() string { return e.msg }

// read returns the next dispatched block: an event (ID set), a Live mark, or
// a position (both zero, s.last updated).
func (s *EventStream) read() (StreamEvent, error) {
	var id uint64
	hasID := false
	var data strings.Builder
	for s.sc.Scan() {
		line := s.sc.Text()
		switch {
		case line == "":
			if data.Len() > 0 {
				if !hasID {
					return StreamEvent{}, &badStream{"an event without an id"}
				}
				if s.known && id <= s.last {
					data.Reset()
					hasID = false
					continue // delivered before the connection dropped
				}
				ev, err := events.DecodeEvent([]byte(data.String()))
				if err != nil {
					return StreamEvent{}, &badStream{fmt.Sprintf("invalid event %d: %v", id, err)}
				}
				s.last, s.known = id, true
				return StreamEvent{ID: id, Event: ev}, nil
			}
			if hasID {
				if !s.known {
					s.last, s.known = id, true
				}
				return StreamEvent{}, nil
			}
		case line == ": live":
			ev := StreamEvent{Live: true, Resumed: s.resumed}
			s.resumed = false
			return ev, nil
		case strings.HasPrefix(line, ":"):
			// a comment: keepalive, or why the gateway closed the stream
		case strings.HasPrefix(line, "id:"):
			n, err := strconv.ParseUint(strings.TrimSpace(line[len("id:"):]), 10, 64)
			if err != nil {
				return StreamEvent{}, &badStream{fmt.Sprintf("invalid event id %q", line)}
			}
			id, hasID = n, true
		case strings.HasPrefix(line, "data:"):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(line[len("data:"):], " "))
		}
	}
	if err := s.sc.Err(); err != nil {
		return StreamEvent{}, err
	}
	return StreamEvent{}, io.EOF
}

// reconnect reopens the connection after the last event delivered,
// retrying with a growing pause until ReconnectFor has passed since the
// connection dropped.
func (s *EventStream) reconnect() error {
	for {
		if s.pause > 0 {
			t := time.NewTimer(s.pause)
			select {
			case <-t.C:
			case <-s.ctx.Done():
				t.Stop()
				return s.ctx.Err()
			}
		}
		s.pause = min(max(2*s.pause, 100*time.Millisecond), 2*time.Second)
		err := s.connect()
		if err == nil {
			s.reconns++
			s.resumed = true
			return nil
		}
		var ae *Error
		switch {
		case errors.Is(err, ErrClosed):
			return err
		case s.ctx.Err() != nil:
			return s.ctx.Err()
		case errors.As(err, &ae) && ae.Status < 500:
			return err // the gateway will not let this stream resume
		case time.Since(s.brokenSince) > s.opts.ReconnectFor:
			return fmt.Errorf("client: lost the event stream of %s and could not resume it within %s: %w", s.sid, s.opts.ReconnectFor, err)
		}
	}
}
