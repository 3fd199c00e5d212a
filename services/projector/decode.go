package projector

import (
	"context"
	"runtime"
	"sync"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/nats-io/nats.go/jetstream"
)

// item is one delivered message, its metadata and its entry.
type item struct {
	msg     jetstream.Msg
	meta    *jetstream.MsgMetadata // nil until parsed (then metaErr may be set)
	metaErr error
	entry   events.Entry
	err     error // from events.DecodeEntry
}

// delivery is a run of consecutive delivered messages, decoded once ready is
// closed. The live projector hands over one message per delivery (an entry
// waits for no other); rebuild and replay hand over chunks, so that the
// channel hand-offs and wake-ups are paid once per chunk, not per entry.
type delivery struct {
	items []item
	ready chan struct{}
}

// maxDecodedAhead bounds the messages decoded or being decoded ahead of the
// pump.
const maxDecodedAhead = 2048

// rebuildChunk is the number of messages per delivery in rebuild and replay.
const rebuildChunk = 64

// decoders decode delivered messages on one goroutine per CPU, so that
// decoding, the slowest step of applying an entry, runs in parallel with
// itself and with the pump; the pump still takes the messages in delivery
// order (each delivery waits for its own decoding).
type decoders struct {
	work chan *delivery
	wg   sync.WaitGroup

	// mu is held by a handler while it hands a delivery over, and by stop
	// while it closes work: a subscription's Closed does not wait for a
	// handler still running.
	mu     sync.Mutex
	closed bool
}

// startDecoders starts the decoding goroutines, with room for buffer
// deliveries waiting; stop them with stop once the consumer's handler can no
// longer be called.
func startDecoders(buffer int) *decoders {
	d := &decoders{work: make(chan *delivery, buffer)}
	for range runtime.GOMAXPROCS(0) {
		d.wg.Go(func() {
			for dl := range d.work {
				for i := range dl.items {
					it := &dl.items[i]
					if it.meta == nil && it.metaErr == nil {
						it.meta, it.metaErr = it.msg.Metadata()
					}
					it.entry, it.err = events.DecodeEntry(it.msg.Data())
				}
				close(dl.ready)
			}
		})
	}
	return d
}

// stop ends the goroutines after they have decoded what was handed to them;
// handlers called later drop their message. The handlers' ctx must have
// ended (a handler waiting to hand over holds mu).
func (d *decoders) stop() {
	d.mu.Lock()
	d.closed = true
	close(d.work)
	d.mu.Unlock()
	d.wg.Wait()
}

// handler returns a message handler that hands each message, in a
// delivery of its own, to the decoders and forwards it, in order, to msgs
// until ctx ends.
func (d *decoders) handler(ctx context.Context, msgs chan<- *delivery) jetstream.MessageHandler {
	return func(m jetstream.Msg) {
		d.send(ctx, msgs, &delivery{items: []item{{msg: m}}, ready: make(chan struct{})})
	}
}

// chunkHandler is handler for rebuild and replay: it gathers up to chunk
// messages per delivery, and hands a delivery over early at the last message
// the pump will want: one whose metadata does not parse, whose pending count
// is zero, or where stop says done or beyond (the pump asks stop again).
func (d *decoders) chunkHandler(ctx context.Context, msgs chan<- *delivery, chunk int,
	stop func(msg jetstream.Msg, seq, pending uint64) (done, beyond bool)) jetstream.MessageHandler {
	var (
		mu  sync.Mutex // an ordered consumer's reset may call from a new goroutine
		cur []item
	)
	return func(m jetstream.Msg) {
		mu.Lock()
		defer mu.Unlock()
		if cur == nil {
			cur = make([]item, 0, chunk)
		}
		meta, err := m.Metadata()
		cur = append(cur, item{msg: m, meta: meta, metaErr: err})
		flush := err != nil || len(cur) == chunk || meta.NumPending == 0
		if !flush {
			done, beyond := stop(m, meta.Sequence.Stream, meta.NumPending)
			flush = done || beyond
		}
		if flush {
			d.send(ctx, msgs, &delivery{items: cur, ready: make(chan struct{})})
			cur = nil
		}
	}
}

// send hands dl to the decoders, then to msgs, until ctx ends.
func (d *decoders) send(ctx context.Context, msgs chan<- *delivery, dl *delivery) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	select {
	case d.work <- dl:
	case <-ctx.Done():
		return
	}
	select {
	case msgs <- dl:
	case <-ctx.Done():
	}
}
