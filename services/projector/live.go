package projector

import (
	"context"
	"sync"
	"time"

	"github.com/cairn-agents/cairn/services/projector/internal/store"
)

// live holds the database queries read and lets an online rebuild replace
// it. Every query holds it for its duration (acquire, then release); the
// switch-over closes it to new queries, waits for those in progress, puts
// the rebuilt database in place and opens it again. A query that arrives
// while it is closed waits (it is answered from the rebuilt database), so
// queries see the old database or the new one, never neither and never an
// error. The writer (Run's goroutine) is the only one to replace the
// database, and reads it with current.
type live struct {
	mu struct {
		sync.Mutex
		db      *store.DB
		active  int           // queries holding db
		closed  chan struct{} // non-nil while closed; closed when open again
		drained chan struct{} // non-nil while closed with queries in progress; closed when the last ends
	}
}

func newLive(db *store.DB) *live {
	l := &live{}
	l.mu.db = db
	return l
}

// acquire returns the database for one query and the function that ends
// the query; it waits while a switch-over is in progress, until ctx ends.
func (l *live) acquire(ctx context.Context) (*store.DB, func(), error) {
	for {
		l.mu.Lock()
		if l.mu.closed == nil {
			l.mu.active++
			db := l.mu.db
			l.mu.Unlock()
			return db, l.release, nil
		}
		wait := l.mu.closed
		l.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}

func (l *live) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.active--
	if l.mu.active == 0 && l.mu.drained != nil {
		close(l.mu.drained)
		l.mu.drained = nil
	}
}

// current returns the database for the writer's goroutine, which is the
// only one to replace it.
func (l *live) current() *store.DB {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.db
}

// close stops new queries and waits up to within for those in progress. It
// returns false, open again, if they did not end in time.
func (l *live) close(within time.Duration) bool {
	l.mu.Lock()
	l.mu.closed = make(chan struct{})
	if l.mu.active == 0 {
		l.mu.Unlock()
		return true
	}
	drained := make(chan struct{})
	l.mu.drained = drained
	l.mu.Unlock()
	t := time.NewTimer(within)
	defer t.Stop()
	select {
	case <-drained:
		return true
	case <-t.C:
		l.mu.Lock()
		if l.mu.active == 0 { // drained as the timer fired
			l.mu.Unlock()
			return true
		}
		l.mu.drained = nil
		l.mu.Unlock()
		l.open(nil)
		return false
	}
}

// open lets queries in again, on db if it is not nil.
func (l *live) open(db *store.DB) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if db != nil {
		l.mu.db = db
	}
	if l.mu.closed != nil {
		close(l.mu.closed)
		l.mu.closed = nil
	}
}
