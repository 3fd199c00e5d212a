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

// Refusals without a log. A command refused for a session that has a log
// is recorded there, as a command_rejected entry. A session that does not
// exist has no log: a refused create (a workspace outside the root, an
// unknown model or tool) or a prompt to a session never created would be
// refused in silence. Those refusals go to the KV bucket cairn_refusals
// under <sid>.<command id> instead (events.Names.RefusalsBucket), where the
// gateway finds them for ?wait=applied and the command status.
//
// The refusal is stored before its command is finished, so the partition's
// checkpoint never passes a command refused in silence: if the put cannot
// be made, the command stays unfinished for the next owner.
//
// A command read again after a crash is applied again unless an entry in
// the log names it. One refused without a log has none, and applying it
// again could give another answer than the client was given (the session
// was created meanwhile by a later command, a tool was registered since).
// So a command read again is looked up in the bucket first, and one found
// there is finished as refused. Only commands the partition's previous
// owners may have seen, at or below the stream's last sequence when the
// partition was acquired, are looked up: new commands cost nothing.

// recordRefusal stores the refusal of cmd; false if it could not be
// stored before the partition stopped.
func (a *actor) recordRefusal(cmd events.Command, code, reason string) bool {
	r := events.Refusal{SessionID: a.sid, CommandID: cmd.ID, Type: cmd.Type, Code: code, Reason: reason,
		Timestamp: events.FormatTime(time.Now())}
	data, err := r.MarshalJSON()
	if err == nil {
		err = jsretry.Do(a.part.ctx, func(ctx context.Context) error {
			_, err := a.o.refusals.Put(ctx, events.RefusalKey(a.sid, cmd.ID), data)
			return err
		})
	}
	if err != nil {
		a.log.Warn("cannot record a refused command; it stays unfinished for the next owner", "command", cmd.ID, "err", err)
		return false
	}
	return true
}

// refusedBefore reports whether c, not named in the log, was refused
// without a log by an earlier owner of the partition.
func (a *actor) refusedBefore(ctx context.Context, seq uint64, commandID string) bool {
	if seq == 0 || seq > a.part.replayUntil.Load() {
		return false
	}
	var found bool
	err := jsretry.Do(ctx, func(ctx context.Context) error {
		_, err := a.o.refusals.Get(ctx, events.RefusalKey(a.sid, commandID))
		found = err == nil
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		a.log.Warn("cannot look up an earlier refusal; applying the command", "command", commandID, "err", err)
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
