package session

import (
	"fmt"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
)

// JetStreamOption configures [NewJetStreamLog].
type JetStreamOption func(*jsOptions) error

type jsOptions struct {
	names         events.Names
	replicas      int
	snapshotEvery int
	retryFor      time.Duration
	attempt       time.Duration
	noCreate      bool
}

func defaultJSOptions() jsOptions {
	return jsOptions{replicas: 1, snapshotEvery: 128, retryFor: 30 * time.Second, attempt: 3 * time.Second}
}

// WithNames sets the prefix of the stream and bucket names (default: cairn).
func WithNames(n events.Names) JetStreamOption {
	return func(o *jsOptions) error {
		if n.Prefix != "" {
			if err := events.ValidatePrefix(n.Prefix); err != nil {
				return err
			}
		}
		o.names = n
		return nil
	}
}

// WithReplicas sets the replicas of the stream and buckets the log creates
// when they do not exist (default 1; 3 on a cluster for durability).
func WithReplicas(r int) JetStreamOption {
	return func(o *jsOptions) error {
		if r < 1 || r > 5 {
			return fmt.Errorf("session: replicas must be 1-5, got %d", r)
		}
		o.replicas = r
		return nil
	}
}

// WithSnapshotEvery sets how many entries a read may find past a session's
// snapshot before it writes a new one (default 128; 0 turns snapshots off).
func WithSnapshotEvery(n int) JetStreamOption {
	return func(o *jsOptions) error {
		if n < 0 {
			return fmt.Errorf("session: snapshot interval must be >= 0, got %d", n)
		}
		o.snapshotEvery = n
		return nil
	}
}

// WithRetry sets how long an operation keeps retrying transient failures
// (no responders, timeouts while a cluster elects a leader), and the timeout
// of one attempt. Defaults: 30s and 3s.
func WithRetry(total, attempt time.Duration) JetStreamOption {
	return func(o *jsOptions) error {
		if total < 0 || attempt <= 0 {
			return fmt.Errorf("session: retry durations must be positive, got %v and %v", total, attempt)
		}
		o.retryFor, o.attempt = total, attempt
		return nil
	}
}

// WithCreate says whether a missing stream or bucket is created (default
// true). Read-only tools pass false so that a wrong prefix or server is an
// error, not a new empty log.
func WithCreate(create bool) JetStreamOption {
	return func(o *jsOptions) error {
		o.noCreate = !create
		return nil
	}
}
