// Package intake reads the commands of one partition in stream order and
// keeps a durable checkpoint: the stream sequence before which every command
// of the partition is finished (its effect, or its refusal, is in the log).
//
// After a crash the next owner of the partition reads again from the
// checkpoint; commands already finished are recognised by the session's log
// (an entry names each command id) and skipped, so every acknowledged command
// is applied exactly once, in order.
//
// # Ordering
//
// Deliver is called in stream order, one command at a time, from Run's
// goroutine. Done may be called from any goroutine, in any order.
//
// # Durability
//
// The checkpoint is written to a KV bucket at most every Interval and when Run
// returns; it only ever lags behind the truth, which makes re-reading safe.
package intake

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/follow"
	"github.com/cairn-agents/cairn/pkg/telemetry"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/trace"
)

// Command is one delivered command. Err is set when the stored message is
// not a valid command; Session is then whatever the subject said.
type Command struct {
	Seq     uint64
	Session events.SessionRef // the tenant and id of the subject
	Cmd     events.Command
	Err     error
	// Parent is the span that sent the command (the gateway request's),
	// from its trace context headers; invalid when it carried none.
	Parent trace.SpanContext
}

// Config configures an Intake.
type Config struct {
	JetStream   jetstream.JetStream
	Stream      string             // the commands stream
	Filter      string             // subjects of the partition
	Checkpoints jetstream.KeyValue // bucket of checkpoints
	Key         string             // this partition's checkpoint key
	Interval    time.Duration      // default 1s
	Deliver     func(Command)
	Logger      *slog.Logger
}

// Intake follows one partition's commands.
type Intake struct {
	cfg Config
	mu  struct {
		sync.Mutex
		pending []uint64 // delivered, in order
		done    map[uint64]bool
		next    uint64 // sequence after the last delivered
	}
}

// New returns an Intake; Run starts it.
func New(cfg Config) (*Intake, error) {
	if cfg.JetStream == nil || cfg.Checkpoints == nil || cfg.Deliver == nil || cfg.Stream == "" || cfg.Filter == "" || cfg.Key == "" {
		return nil, errors.New("intake: JetStream, Stream, Filter, Checkpoints, Key and Deliver are required")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	in := &Intake{cfg: cfg}
	in.mu.done = map[uint64]bool{}
	return in, nil
}

// Checkpoint reads the stored checkpoint: the first sequence to read (1 if none).
func (in *Intake) Checkpoint(ctx context.Context) (uint64, error) {
	kve, err := in.cfg.Checkpoints.Get(ctx, in.cfg.Key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return 1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("intake: read checkpoint %s: %w", in.cfg.Key, err)
	}
	seq, err := strconv.ParseUint(string(kve.Value()), 10, 64)
	if err != nil || seq == 0 {
		return 0, fmt.Errorf("intake: checkpoint %s holds %q, not a sequence", in.cfg.Key, kve.Value())
	}
	return seq, nil
}

// Run delivers commands from the checkpoint on until ctx is cancelled. Run
// again after a failure, it goes on after the last command it delivered, so
// no command is delivered twice by one Intake.
func (in *Intake) Run(ctx context.Context) error {
	in.mu.Lock()
	start := in.mu.next
	in.mu.Unlock()
	if start == 0 {
		var err error
		if start, err = in.Checkpoint(ctx); err != nil {
			return err
		}
		in.mu.Lock()
		in.mu.next = start
		in.mu.Unlock()
	}
	// pkg/follow, not nats.go's ordered consumer: that one, recreated right
	// after a NATS node is killed, can land on the dead node and never
	// deliver again while it stays down.
	msgs := make(chan jetstream.Msg, 64)
	f, err := follow.Start(ctx, in.cfg.JetStream, follow.Config{Stream: in.cfg.Stream, Filter: in.cfg.Filter, From: start, Logger: in.cfg.Logger},
		func(m jetstream.Msg) {
			select {
			case msgs <- m:
			case <-ctx.Done():
			}
		})
	if err != nil {
		return fmt.Errorf("intake: consumer on %s: %w", in.cfg.Filter, err)
	}
	defer f.Stop()
	var wg sync.WaitGroup
	saver := time.NewTicker(in.cfg.Interval)
	defer saver.Stop()
	saved := start
	stopSaver := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stopSaver:
				return
			case <-saver.C:
				if cp := in.checkpoint(); cp != saved {
					if err := in.save(context.Background(), cp); err == nil {
						saved = cp
					}
				}
			}
		}
	}()
	for ctx.Err() == nil {
		var m jetstream.Msg
		select {
		case <-ctx.Done():
			continue
		case m = <-msgs:
		}
		meta, err := m.Metadata()
		if err != nil {
			in.cfg.Logger.Warn("intake: message without metadata", "err", err)
			continue
		}
		c := Command{Seq: meta.Sequence.Stream}
		c.Session, _ = events.SessionOf(m.Subject())
		c.Cmd, c.Err = events.DecodeCommand(m.Data())
		c.Parent = trace.SpanContextFromContext(telemetry.Extract(context.Background(), m.Headers()))
		if c.Err == nil && c.Cmd.SessionID != c.Session.ID {
			c.Err = fmt.Errorf("sessionId %q does not match the subject's session %q", c.Cmd.SessionID, c.Session.ID)
		}
		in.mu.Lock()
		in.mu.pending = append(in.mu.pending, c.Seq)
		in.mu.next = c.Seq + 1
		in.mu.Unlock()
		in.cfg.Deliver(c)
	}
	close(stopSaver)
	wg.Wait()
	if cp := in.checkpoint(); cp != saved {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return in.save(sctx, cp)
	}
	return nil
}

// Done marks the command at seq finished.
func (in *Intake) Done(seq uint64) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.mu.done[seq] = true
	for len(in.mu.pending) > 0 && in.mu.done[in.mu.pending[0]] {
		delete(in.mu.done, in.mu.pending[0])
		in.mu.pending = in.mu.pending[1:]
	}
}

// checkpoint is the first sequence not known to be finished.
func (in *Intake) checkpoint() uint64 {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.mu.pending) > 0 {
		return in.mu.pending[0]
	}
	return in.mu.next
}

func (in *Intake) save(ctx context.Context, seq uint64) error {
	if _, err := in.cfg.Checkpoints.Put(ctx, in.cfg.Key, []byte(strconv.FormatUint(seq, 10))); err != nil {
		in.cfg.Logger.Warn("intake: save checkpoint", "key", in.cfg.Key, "err", err)
		return err
	}
	return nil
}
