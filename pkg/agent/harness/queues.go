package harness

import (
	"github.com/cairn-agents/cairn/pkg/events"
)

// Steer queues a message to inject after the current tool batch, before the
// next model call. When idle it waits for the next run.
func (h *Harness) Steer(m events.Message) {
	h.mu.Lock()
	h.mu.steer = append(h.mu.steer, m)
	q := h.queueLocked()
	h.mu.Unlock()
	h.publish(q)
}

// FollowUp queues a message to deliver when the agent would otherwise stop.
func (h *Harness) FollowUp(m events.Message) {
	h.mu.Lock()
	h.mu.follow = append(h.mu.follow, m)
	q := h.queueLocked()
	h.mu.Unlock()
	h.publish(q)
}

// NextTurn queues a message to send with the next prompt. Abort keeps it.
func (h *Harness) NextTurn(m events.Message) {
	h.mu.Lock()
	h.mu.next = append(h.mu.next, m)
	h.mu.Unlock()
}

// Aborted is what an abort took out of the queues.
type Aborted struct {
	Steering []events.Message
	FollowUp []events.Message
}

// Abort clears the steering and follow-up queues and returns what they
// held, and stops the running operation: the run ends with an aborted
// assistant message. Next-turn messages and held writes are kept. It does
// not wait; see WaitIdle.
func (h *Harness) Abort() Aborted {
	h.mu.Lock()
	a := Aborted{Steering: h.mu.steer, FollowUp: h.mu.follow}
	h.mu.steer, h.mu.follow = nil, nil
	cancel := h.mu.cancel
	q := h.queueLocked()
	h.mu.Unlock()
	if cancel != nil {
		cancel(errAborted)
	}
	if len(a.Steering)+len(a.FollowUp) > 0 {
		h.publish(q)
	}
	return a
}

func (h *Harness) takeSteering() []events.Message {
	return h.take(&h.mu.steer, h.cfg.SteeringMode)
}

func (h *Harness) takeFollowUp() []events.Message {
	return h.take(&h.mu.follow, h.cfg.FollowUpMode)
}

func (h *Harness) take(q *[]events.Message, mode QueueMode) []events.Message {
	h.mu.Lock()
	if len(*q) == 0 {
		h.mu.Unlock()
		return nil
	}
	var out []events.Message
	if mode == All {
		out, *q = *q, nil
	} else {
		out = []events.Message{(*q)[0]}
		*q = append([]events.Message(nil), (*q)[1:]...)
	}
	ev := h.queueLocked()
	h.mu.Unlock()
	h.publish(ev)
	return out
}

func (h *Harness) queueLocked() events.Event {
	q := &events.Queue{Steering: texts(h.mu.steer), FollowUp: texts(h.mu.follow)}
	return events.Event{Type: events.EvQueueUpdate, Queue: q}
}

func texts(ms []events.Message) []string {
	out := make([]string, len(ms))
	for i := range ms {
		out[i] = ms[i].Content.Text()
	}
	return out
}
