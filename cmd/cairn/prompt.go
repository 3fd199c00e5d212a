package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/cairn-agents/cairn/pkg/events"
)

// Following a prompt. The live events are a convenience and may be lost
// (DESIGN §2): the session log is the record. So `cairn prompt`
//   - follows the event stream through pkg/client, which resumes a broken
//     connection with Last-Event-ID and delivers nothing twice;
//   - asks the gateway where its command stands (GET .../commands/{id}, read
//     from the log) when no event has come for followQuiet, and once a
//     resumed stream has replayed what it missed; a settled run ends the
//     command as agent_end would, printing what of the final answer the
//     events did not show.

// followQuiet is how long `prompt` waits without an event before it asks
// the log whether the run has settled. Asking costs one session load.
const followQuiet = 5 * time.Second

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

// prompter sends prompts and follows them.
type prompter struct {
	cl *client.Client
	// quiet makes the timer after which the log is asked whether the run
	// settled; nil means a wall-clock timer of followQuiet. Tests supply
	// one they fire by hand.
	quiet func() quietTimer
}

func (p *prompter) quietTimer() quietTimer {
	if p.quiet != nil {
		return p.quiet()
	}
	return &wallQuiet{t: time.NewTimer(followQuiet), d: followQuiet}
}

type streamItem struct {
	ev  client.StreamEvent
	err error
}

// promptAndFollow sends a prompt and prints the agent's output until it
// settles: text as it streams, thinking dimmed, each tool call and its
// outcome, and a spinner while nothing arrives (on a terminal).
func promptAndFollow(ctx context.Context, cl *client.Client, w io.Writer, sid, text, whenBusy string) error {
	return (&prompter{cl: cl}).run(ctx, w, sid, text, whenBusy)
}

func (p *prompter) run(ctx context.Context, w io.Writer, sid, text, whenBusy string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f := &follower{cl: p.cl, sid: sid, r: &renderer{w: w, spin: isTerminal(w)}}
	stream, err := p.cl.FollowEvents(ctx, sid, client.FollowOptions{})
	if err != nil {
		return err
	}
	items := make(chan streamItem)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			ev, err := stream.Next()
			select {
			case items <- streamItem{ev, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	defer func() {
		cancel()
		stream.Close()
		<-done
	}()
	cmd := client.Prompt(text)
	cmd.ID, cmd.WhenBusy = events.NewID(), events.BusyPolicy(whenBusy)
	f.cid = cmd.ID
	if _, err := p.cl.Send(ctx, sid, cmd); err != nil {
		return err
	}
	quiet := p.quietTimer()
	defer quiet.Stop()
	tick := time.NewTicker(120 * time.Millisecond)
	defer tick.Stop()
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
		case it := <-items:
			if it.err != nil {
				f.r.clearSpinner()
				return it.err
			}
			if it.ev.Live {
				// After a resume, what the stream stored while we were away
				// has been shown: if the end was lost, the log says so.
				if it.ev.Resumed {
					if done, err := f.settled(ctx); done {
						return err
					}
					quiet.Reset()
				}
				continue
			}
			quiet.Reset()
			ev := it.ev.Event
			switch ev.Type {
			case events.EvRetryStart:
				f.retrying = true
			case events.EvRetryEnd, events.EvMessageStart, events.EvAgentEnd:
				f.retrying = false
			}
			if done, err := f.r.event(ev, f.cid); done || err != nil {
				f.r.clearSpinner()
				return err
			}
		}
	}
}

// follower is the state of one prompt being followed.
type follower struct {
	cl  *client.Client
	sid string
	cid string // the prompt's command id
	r   *renderer
	// retrying: the harness said it retries a failed model call; the
	// error reply the log then ends with does not settle the run.
	retrying bool
}

// settled asks the log where the prompt stands. done when its run has
// ended (err says why it failed, if it did); not done while it runs or
// when the gateway cannot say (the live stream may still bring the end).
func (f *follower) settled(ctx context.Context) (done bool, err error) {
	st, err := f.cl.CommandStatus(ctx, f.sid, f.cid)
	if err != nil {
		return false, nil
	}
	switch st.State {
	case client.StateRejected:
		f.r.clearSpinner()
		return true, fmt.Errorf("prompt refused: %s", st.Reason)
	case client.StateSettled, client.StateApplied:
		if f.retrying && st.Message != nil && st.Message.StopReason == events.StopError {
			return false, nil // the backoff may outlast the quiet time
		}
		f.r.settle(st.Message, st.Interrupted)
		return true, nil
	}
	return false, nil
}
