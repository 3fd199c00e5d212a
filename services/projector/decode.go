package projector

import (
	"context"
	"runtime"
	"sync"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/nats-io/nats.go/jetstream"
)

// delivery is a message and its entry, decoded once ready is closed.
type delivery struct {
	msg   jetstream.Msg
	ready chan struct{}
	entry events.Entry
	err   error // from events.DecodeEntry
}

// maxDecodedAhead bounds the messages decoded or being decoded ahead of the
// pump.
const maxDecodedAhead = 2048

// decoders decode delivered messages on one goroutine per CPU, so that
// decoding, the slowest step of applying an entry, runs in parallel with
// itself and with the pump; the pump still takes the messages in delivery
// order (each waits for its own decoding).
type decoders struct {
	work chan *delivery
	wg   sync.WaitGroup
}

// startDecoders starts the decoding goroutines; stop them with stop once
// the consumer's handler can no longer be called.
func startDecoders(buffer int) *decoders {
	d := &decoders{work: make(chan *delivery, buffer)}
	for range runtime.GOMAXPROCS(0) {
		d.wg.Go(func() {
			for m := range d.work {
				m.entry, m.err = events.DecodeEntry(m.msg.Data())
				close(m.ready)
			}
		})
	}
	return d
}

// stop ends the goroutines after they have decoded what was handed to them.
func (d *decoders) stop() {
	close(d.work)
	d.wg.Wait()
}

// handler returns a message handler that hands each message to the
// decoders and forwards it, in order, to msgs until ctx ends.
func (d *decoders) handler(ctx context.Context, msgs chan<- *delivery) jetstream.MessageHandler {
	return func(m jetstream.Msg) {
		dl := &delivery{msg: m, ready: make(chan struct{})}
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
}
