package projector

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/services/projector/internal/store"
	"github.com/nats-io/nats.go/jetstream"
)

// errGap: a message arrived past the next expected sequence.
var errGap = errors.New("projector: gap in the delivered sequence")

// pump applies delivered messages to a writer in batches: it blocks for one
// message, takes whatever else has already arrived up to the batch size,
// commits, then acknowledges the batch's last message.
type pump struct {
	w     *store.Writer
	batch int
	prog  *progress
	m     *metrics // nil: no metrics (rebuild, replay)
	ack   bool     // acknowledge (durable consumer with AckAll)
	// full makes every batch wait for batch entries (or the end, as stop
	// says), and commits with CommitAsync: for rebuild and replay, where
	// throughput matters and lag does not. ack must be false.
	full bool

	// stop, if set, is asked after each message whether the pump is done;
	// beyond means the message lies past the end and is not applied.
	stop func(msg jetstream.Msg, seq, pending uint64) (done, beyond bool)
	// tick, if set, runs every tickEvery while the pump waits.
	tick      func(ctx context.Context)
	tickEvery time.Duration
	// onCommit, if set, is told of each commit (Config.OnCommit).
	onCommit func(Commit)
	// switches, if set, delivers the switch-over requests of online
	// rebuilds; serve takes each between two batches and returns the
	// writer to go on with.
	switches <-chan *switchReq
	serve    func(ctx context.Context, w *store.Writer, r *switchReq) (*store.Writer, error)
	stored   []time.Time // the stream times of the open batch's entries, for onCommit

	cur []item // the delivery being applied, from cur[pos]
	pos int
}

// run applies messages until ctx ends (nil), stop says done (nil) or an error.
func (p *pump) run(ctx context.Context, msgs <-chan *delivery) error {
	var tickC <-chan time.Time
	if p.tick != nil {
		t := time.NewTicker(p.tickEvery)
		defer t.Stop()
		tickC = t.C
	}
	for {
		if !p.waiting() {
			select {
			case <-ctx.Done():
				return nil
			case <-tickC:
				p.tick(ctx)
				continue
			case r := <-p.switches:
				if err := p.switchOver(ctx, r); err != nil {
					return err
				}
				continue
			case d := <-msgs:
				p.take(d)
				continue
			}
		}
		last, done, err := p.fill(ctx, msgs)
		if errors.Is(err, errGap) {
			// Keep what was applied before the gap.
			if cerr := p.commit(last); cerr != nil {
				return cerr
			}
			return err
		}
		if err != nil {
			return err
		}
		if err := p.commit(last); err != nil {
			return err
		}
		if done {
			return nil
		}
		select { // between two batches, even when busy
		case r := <-p.switches:
			if err := p.switchOver(ctx, r); err != nil {
				return err
			}
		default:
		}
	}
}

// switchOver serves a switch-over request with the open batch committed
// (commit ran last) and goes on with the writer it returns.
func (p *pump) switchOver(ctx context.Context, r *switchReq) error {
	w, err := p.serve(ctx, p.w, r)
	if w != nil {
		p.w = w
		p.prog.applied.Store(w.Applied()) // the rebuilt database may be ahead
		p.prog.last.Store(w.Last())
	}
	return err
}

// waiting reports whether a received message is waiting to be applied.
func (p *pump) waiting() bool { return p.pos < len(p.cur) }

// take makes d's messages the next to apply, once decoded.
func (p *pump) take(d *delivery) {
	<-d.ready // decoders (decode.go) close it once decoded
	p.cur, p.pos = d.items, 0
}

// next returns the next message to apply: a waiting one, or one received
// from msgs if wait (or if one has arrived); nil if none or ctx ended.
func (p *pump) next(ctx context.Context, msgs <-chan *delivery, wait bool) *item {
	for !p.waiting() {
		if wait {
			select {
			case d := <-msgs:
				p.take(d)
			case <-ctx.Done():
				return nil
			}
			continue
		}
		select {
		case d := <-msgs:
			p.take(d)
		default:
			return nil
		}
	}
	it := &p.cur[p.pos]
	p.pos++
	return it
}

// fill applies the waiting message and then those already received, up to
// a batch (in full mode, it waits for a whole batch or the end).
func (p *pump) fill(ctx context.Context, msgs <-chan *delivery) (last jetstream.Msg, done bool, err error) {
	for n := 0; ; n++ {
		m := p.next(ctx, msgs, p.full)
		if m == nil {
			return last, false, nil
		}
		done, beyond, err := p.apply(m)
		m.entry = events.Entry{} // the chunk stays live until its last message: drop what is done
		if err != nil {
			return last, false, err
		}
		if !beyond {
			last = m.msg
		}
		if done || n+1 >= p.batch {
			return last, done, nil
		}
	}
}

func (p *pump) apply(d *item) (done, beyond bool, err error) {
	if d.meta == nil && d.metaErr == nil {
		d.meta, d.metaErr = d.msg.Metadata()
	}
	msg, meta := d.msg, d.meta
	if d.metaErr != nil {
		return false, false, fmt.Errorf("projector: message metadata: %w", d.metaErr)
	}
	seq := meta.Sequence.Stream
	p.prog.seen(seq + meta.NumPending)
	if p.stop != nil {
		done, beyond = p.stop(msg, seq, meta.NumPending)
		if beyond {
			return true, true, nil
		}
	}
	if p.ack && p.w.Last() > 0 && seq > p.w.Last()+1 {
		// The log has no gaps (limits retention, deletes denied), so a
		// jump means the consumer delivered out of order (seen during a
		// leader change): stop here and read again from applied+1.
		return false, true, fmt.Errorf("%w: got sequence %d after %d", errGap, seq, p.w.Last())
	}
	bad := p.w.Bad()
	applied, err := p.w.ApplyDecoded(seq, msg.Subject(), msg.Data(), &d.entry, d.err)
	if err != nil {
		return false, false, err
	}
	p.prog.last.Store(p.w.Last())
	if applied && p.onCommit != nil {
		p.stored = append(p.stored, meta.Timestamp)
	}
	if p.m != nil {
		if applied {
			p.m.entries.Inc()
		}
		if p.w.Bad() > bad {
			p.m.bad.Inc()
		}
	}
	return done, false, nil
}

func (p *pump) commit(last jetstream.Msg) error {
	n := p.w.Pending()
	commit := p.w.Commit
	if p.full {
		// Rebuild: apply the next batch while this one is written.
		// Nothing is acknowledged, so nothing waits for the commit.
		commit = p.w.CommitAsync
	}
	if err := commit(); err != nil {
		return err
	}
	p.prog.applied.Store(p.w.Applied())
	if p.onCommit != nil && n > 0 {
		p.onCommit(Commit{Applied: p.w.Applied(), Stored: p.stored, At: time.Now()})
		p.stored = p.stored[:0]
	}
	if p.m != nil && n > 0 {
		p.m.batches.Observe(float64(n))
	}
	if p.ack && last != nil {
		// AckAll: acknowledging the last message covers the batch. A lost
		// acknowledgement only means a redelivery, which Apply ignores.
		_ = last.Ack()
	}
	return nil
}
