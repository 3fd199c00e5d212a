package orchestrator

import (
	"context"
	"errors"

	"github.com/cairn-agents/cairn/pkg/jsretry"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/nats-io/nats.go/jetstream"
)

// Commands consumed with no effect. A command is consumed once an entry
// naming it is in the log — except a navigation to the active leaf, which,
// as in pi, changes nothing and writes nothing. Its outcome is recorded
// under provision.NoEffectKey in the checkpoints bucket, and the record is
// stored before the command is marked done, so that:
//   - the gateway can report the command applied (?wait=applied,
//     GET .../commands/{id}), after a restart too, though no entry names it;
//   - an owner that reads the command again (the partition's checkpoint
//     lags behind, and a crash may lose its last moves) finds the record
//     and does not apply it a second time: by then later commands may have
//     moved the leaf, and a navigation applied again would move it back.

// noEffectRecorded reports whether commandID was consumed with no effect
// before. It asks until JetStream answers or the partition stops (then it
// reports false: the command is not applied by this owner anyway).
func (a *actor) noEffectRecorded(commandID string) bool {
	found := false
	err := jsretry.Do(a.part.ctx, func(ctx context.Context) error {
		_, err := a.o.checkpoints.Get(ctx, provision.NoEffectKey(a.sid, commandID))
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return nil
		}
		found = err == nil
		return err
	})
	if err != nil {
		a.log.Warn("cannot read whether a command was applied with no effect", "command", commandID, "err", err)
	}
	return found
}

// recordNoEffect records that commandID was consumed with no effect and
// reports whether the record is stored. It tries until it is or the
// partition stops, holding up the session's next commands meanwhile (it
// runs on the actor's goroutine, or in the navigation's run, which keeps
// the session busy); when the partition stops first, the command stays
// unfinished, for the next owner to apply again.
func (a *actor) recordNoEffect(commandID, what string) bool {
	err := jsretry.Do(a.part.ctx, func(ctx context.Context) error {
		_, err := a.o.checkpoints.Put(ctx, provision.NoEffectKey(a.sid, commandID), []byte(what))
		return err
	})
	if err != nil {
		a.log.Warn("cannot record a command applied with no effect; it stays unfinished for the next owner", "command", commandID, "err", err)
		return false
	}
	return true
}
