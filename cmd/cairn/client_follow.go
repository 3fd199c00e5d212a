package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
)

// Following a prompt. The live events are a convenience and may be lost
// (DESIGN §2): the session log is the record. So `cairn prompt`
//   - resumes a broken event stream with Last-Event-ID, printing nothing
//     twice (each event's id is its stream sequence);
//   - asks the gateway where its command stands (GET .../commands/{id}, read
//     from the log) when no event has come for followQuiet, and once a
//     resumed stream has replayed what it missed; a settled run ends the
//     command as agent_end would, printing what of the final answer the
//     events did not show.

// followQuiet is how long `prompt` waits without an event before it asks
// the log whether the run has settled. Asking costs one session load.
const followQuiet = 5 * time.Second

// reconnectFor bounds how long `prompt` keeps trying to reopen a broken
// event stream before it gives up.
const reconnectFor = time.Minute

// quietTimer fires when no event has come for a while.
type quietTimer interface {
	C() <-chan time.Time
	Reset() // an event came: start waiting again
	Stop()
}

type wallQuiet struct {
	t *time.Timer
	d time.Duration
}

func (w *wallQuiet) C() <-chan time.Time { return w.t.C }
func (w *wallQuiet) Reset()              { w.t.Reset(w.d) }
func (w *wallQuiet) Stop()               { w.t.Stop() }

func (c *client) quietTimer() quietTimer {
	if c.quiet != nil {
		return c.quiet()
	}
	return &wallQuiet{t: time.NewTimer(followQuiet), d: followQuiet}
}

// liveConn is one open event stream and the goroutine reading it.
type liveConn struct {
	items  chan liveItem
	stream *eventStream
	cancel context.CancelFunc
	done   chan struct{}
}

type liveItem struct {
	it  sseItem
	err error
}

func (c *client) openLive(ctx context.Context, sid string, resume bool, after uint64) (*liveConn, error) {
	ctx, cancel := context.WithCancel(ctx)
	stream, err := c.sessionEvents(ctx, sid, resume, after)
	if err != nil {
		cancel()
		return nil, err
	}
	lc := &liveConn{items: make(chan liveItem), stream: stream, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(lc.done)
		for {
			it, err := stream.next()
			select {
			case lc.items <- liveItem{it, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return lc, nil
}

// close ends the connection and waits for its reader.
func (lc *liveConn) close() {
	lc.cancel()
	lc.stream.close()
	<-lc.done
}

// runStatus is GET /v1/sessions/{id}/commands/{commandId}.
type runStatus struct {
	State       string          `json:"state"`
	Reason      string          `json:"reason"`
	Message     *events.Message `json:"message"`
	Interrupted bool            `json:"interrupted"`
}

// promptAndFollow sends a prompt and prints the agent's output until it
// settles: text as it streams, thinking dimmed, each tool call and its
// outcome, and a spinner while nothing arrives (on a terminal).
func promptAndFollow(ctx context.Context, cl *client, w io.Writer, sid, text, whenBusy string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f := &follower{cl: cl, sid: sid, r: &renderer{w: w, spin: isTerminal(w)}}
	conn, err := cl.openLive(ctx, sid, false, 0)
	if err != nil {
		return err
	}
	defer func() {
		if conn != nil {
			conn.close()
		}
	}()
	f.cid = events.NewID()
	body := map[string]any{"id": f.cid, "type": "prompt", "text": text, "whenBusy": whenBusy}
	if err := cl.do(ctx, "POST", "/v1/sessions/"+url.PathEscape(sid)+"/commands", body, nil); err != nil {
		return err
	}
	quiet := cl.quietTimer()
	defer quiet.Stop()
	tick := time.NewTicker(120 * time.Millisecond)
	defer tick.Stop()
	resumed := false
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			f.r.spinner()
		case <-quiet.C():
			if done, err := f.settled(ctx); done {
				return err
			}
			quiet.Reset()
		case n := <-conn.items:
			if n.err != nil {
				conn.close()
				if conn, err = f.reconnect(ctx, n.err); err != nil {
					f.r.clearSpinner()
					return err
				}
				resumed = true
				quiet.Reset()
				continue
			}
			it := n.it
			if it.Live {
				if resumed {
					// What the stream stored while we were away is shown:
					// if the end was lost with the connection, the log says so.
					resumed = false
					if done, err := f.settled(ctx); done {
						return err
					}
				}
				continue
			}
			if it.HasID {
				if it.Event != nil && it.ID <= f.last && f.seen {
					continue // already shown before the stream was resumed
				}
				f.last, f.seen = max(f.last, it.ID), true
			}
			if it.Event == nil {
				continue
			}
			quiet.Reset()
			switch it.Event.Type {
			case events.EvRetryStart:
				f.retrying = true
			case events.EvRetryEnd, events.EvMessageStart, events.EvAgentEnd:
				f.retrying = false
			}
			if done, err := f.r.event(*it.Event, f.cid); done || err != nil {
				f.r.clearSpinner()
				return err
			}
		}
	}
}

// follower is the state of one promptAndFollow.
type follower struct {
	cl   *client
	sid  string
	cid  string // the prompt's command id
	r    *renderer
	last uint64 // the highest event id seen (the stream's position at first)
	seen bool   // last is known
	// retrying: the harness said it retries a failed model call; the
	// error reply the log then ends with does not settle the run.
	retrying bool
}

// reconnect reopens the event stream after the last event seen, retrying
// with a growing pause for up to reconnectFor.
func (f *follower) reconnect(ctx context.Context, cause error) (*liveConn, error) {
	if errors.Is(cause, io.EOF) {
		cause = errors.New("the gateway closed the stream")
	}
	giveUp := time.Now().Add(reconnectFor)
	pause := 100 * time.Millisecond
	for {
		conn, err := f.cl.openLive(ctx, f.sid, true, f.last)
		if err == nil {
			return conn, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if time.Now().After(giveUp) {
			return nil, fmt.Errorf("lost the event stream (%v) and could not resume it for %s: %w", cause, reconnectFor, err)
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
		pause = min(2*pause, 2*time.Second)
	}
}

// settled asks the log where the prompt stands. done when its run has
// ended (err says why it failed, if it did); not done while it runs or
// when the gateway cannot say (the live stream may still bring the end).
func (f *follower) settled(ctx context.Context) (done bool, err error) {
	var st runStatus
	path := "/v1/sessions/" + url.PathEscape(f.sid) + "/commands/" + url.PathEscape(f.cid)
	if err := f.cl.do(ctx, "GET", path, nil, &st); err != nil {
		return false, nil
	}
	switch st.State {
	case "rejected":
		f.r.clearSpinner()
		return true, fmt.Errorf("prompt refused: %s", st.Reason)
	case "settled", "applied":
		if f.retrying && st.Message != nil && st.Message.StopReason == events.StopError {
			return false, nil // the backoff may outlast the quiet time
		}
		f.r.settle(st.Message, st.Interrupted)
		return true, nil
	}
	return false, nil
}
