package orchestrator

import (
	"sync"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/nats-io/nats.go/jetstream"
)

// eventQueue publishes the live events of a partition's sessions on a
// goroutine of its own, in the order they were pushed, so a session's run
// does not wait for the encoding of every event it emits before it goes
// on (a turn emits a dozen or more). Events may be lost without harm (the
// log is the record); the queue does not make that more likely: it hands
// every event to the publisher's async window, as the run did before.
type eventQueue struct {
	o    *Orchestrator
	wake chan struct{}
	done chan struct{}
	mu   struct {
		sync.Mutex
		q      []queuedEvent
		spare  []queuedEvent
		closed bool
	}
}

type queuedEvent struct {
	sid events.SessionRef
	ev  events.Event
}

func newEventQueue(o *Orchestrator) *eventQueue {
	q := &eventQueue{o: o, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go q.run()
	return q
}

// push queues ev of session sid; after close it publishes at once.
func (q *eventQueue) push(sid events.SessionRef, ev events.Event) {
	q.mu.Lock()
	if q.mu.closed {
		q.mu.Unlock()
		q.o.publishEvent(sid, ev)
		return
	}
	q.mu.q = append(q.mu.q, queuedEvent{sid, ev})
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// close publishes what is queued and stops the goroutine.
func (q *eventQueue) close() {
	q.mu.Lock()
	q.mu.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	<-q.done
}

func (q *eventQueue) run() {
	defer close(q.done)
	for range q.wake {
		for {
			q.mu.Lock()
			batch, closed := q.mu.q, q.mu.closed
			q.mu.q = q.mu.spare[:0]
			q.mu.Unlock()
			for i := range batch {
				q.o.publishEvent(batch[i].sid, batch[i].ev)
			}
			clear(batch)
			q.mu.Lock()
			q.mu.spare = batch
			empty := len(q.mu.q) == 0
			q.mu.Unlock()
			if empty {
				if closed {
					return
				}
				break
			}
		}
	}
}

// publishEvent encodes ev and hands it to the async publisher.
func (o *Orchestrator) publishEvent(sid events.SessionRef, ev events.Event) {
	data, err := ev.Encode()
	if err != nil {
		o.log.Warn("cannot encode event", "session", sid, "type", ev.Type, "err", err)
		return
	}
	if _, err := o.js.PublishAsync(o.cfg.Names.EventSubject(sid), data, jetstream.WithStallWait(5*time.Second)); err != nil {
		o.metrics.eventsDropped.Inc()
		o.log.Warn("live event dropped", "session", sid, "type", ev.Type, "err", err)
	}
}
