package orchestrator

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/jsretry"
	"github.com/nats-io/nats.go/jetstream"
)

// Outcomes without a log entry. A command is consumed once an entry naming
// it is in the log; two kinds of command can have none:
//
//   - a refusal where the session has no log: a refused create (a workspace
//     outside the root, an unknown model or tool) or a prompt to a session
//     never created would be refused in silence;
//   - a command applied with nothing written: a navigation to the active
//     leaf, which, as in pi, changes nothing and writes nothing.
//
// Their outcome (events.Outcome) goes to the KV bucket cairn_outcomes under
// <tenant>.<sid>.<command id> (events.Names.OutcomesBucket), with the commands
// stream's max age as TTL, where the gateway finds it for ?wait=applied and
// the command status.
//
// The outcome is stored before its command is finished, so the partition's
// checkpoint never passes a command whose outcome nobody can read: if the
// put cannot be made, the command stays unfinished for the next owner.
//
// A command read again after a crash is applied again unless an entry in
// the log names it. One with an outcome here has none, and applying it
// again could give another answer than the client was given (the session
// was created meanwhile by a later command, a tool was registered since, a
// navigation applied again would move the leaf back after later commands
// moved it). So a command read again is looked up in the bucket first, and
// one found there is finished as it was. Only commands the partition's
// previous owners may have seen, at or below the stream's last sequence
// when the partition was acquired, are looked up: new commands cost nothing.

// recordRefusal stores the refusal of cmd; false if it could not be
// stored before the partition stopped.
func (a *actor) recordRefusal(cmd events.Command, code, reason string) bool {
	return a.recordOutcome(events.Outcome{CommandID: cmd.ID, Type: cmd.Type, Code: code, Reason: reason})
}

// recordNoEffect stores that cmd was applied with nothing written; false
// if it could not be stored before the partition stopped. It holds up the
// session's next commands meanwhile (it runs on the actor's goroutine, or
// in the navigation's run, which keeps the session busy).
func (a *actor) recordNoEffect(cmd events.Command) bool {
	return a.recordOutcome(events.Outcome{CommandID: cmd.ID, Type: cmd.Type, NoEffect: true})
}

// recordOutcome stores r, the outcome of a command no entry names; it tries
// until it is stored or the partition stops (false).
func (a *actor) recordOutcome(r events.Outcome) bool {
	r.SessionID, r.Timestamp = a.sid.ID, events.FormatTime(time.Now())
	data, err := r.MarshalJSON()
	if err == nil {
		err = jsretry.Do(a.part.ctx, func(ctx context.Context) error {
			_, err := a.o.outcomes.Put(ctx, events.OutcomeKey(a.sid, r.CommandID), data)
			return err
		})
	}
	if err != nil {
		a.log.Warn("cannot record a command's outcome; it stays unfinished for the next owner", "command", r.CommandID, "err", err)
		return false
	}
	return true
}

// finishedBefore reports whether c, not named in the log, was finished
// without a log entry by an earlier owner of the partition.
func (a *actor) finishedBefore(ctx context.Context, seq uint64, commandID string) bool {
	if seq == 0 || seq > a.part.replayUntil.Load() {
		return false
	}
	var found bool
	err := jsretry.Do(ctx, func(ctx context.Context) error {
		_, err := a.o.outcomes.Get(ctx, events.OutcomeKey(a.sid, commandID))
		found = err == nil
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		a.log.Warn("cannot look up an earlier outcome; applying the command", "command", commandID, "err", err)
	}
	return found
}

// lastCommandSeq returns the commands stream's last sequence: every command
// an earlier owner of a partition may have taken is at or below it.
func (o *Orchestrator) lastCommandSeq(ctx context.Context) uint64 {
	last := uint64(math.MaxUint64) // unknown: look every command up
	_ = jsretry.Do(ctx, func(ctx context.Context) error {
		s, err := o.js.Stream(ctx, o.cfg.Names.CommandsStream())
		if err != nil {
			return err
		}
		last = s.CachedInfo().State.LastSeq
		return nil
	})
	return last
}
