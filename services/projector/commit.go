package projector

import "time"

// Commit describes one batch the live projector committed, for
// Config.OnCommit.
type Commit struct {
	// Applied is the stream sequence of the batch's last entry.
	Applied uint64
	// Stored holds, for each entry the batch applied, in order, the time
	// the stream stored it (its JetStream timestamp). Valid only during
	// the call.
	Stored []time.Time
	// At is when the commit returned.
	At time.Time
}
