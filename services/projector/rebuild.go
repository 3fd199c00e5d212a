package projector

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/cairn-agents/cairn/services/projector/internal/store"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrNotEmpty: Rebuild was given a directory that already holds files.
var ErrNotEmpty = errors.New("projector: rebuild needs a new or empty directory")

// RebuildResult says what a rebuild did.
type RebuildResult struct {
	Applied uint64 // last stream sequence applied
}

// Rebuild recreates every read model from stream sequence 1 into a fresh
// database in cfg.Dir (which must not exist or be empty), up to until (0 =
// the stream's last sequence when the rebuild starts). The result is, key for
// key, what a live projector holds once it has applied the same sequence.
// It reads the log with an ordered consumer, not the durable one. It does
// not compute the new database's digest: [Dump] does, once Rebuild has
// returned (as `cairn projector rebuild` does).
func Rebuild(ctx context.Context, cfg Config, until uint64) (_ RebuildResult, err error) {
	if err := cfg.Validate(); err != nil {
		return RebuildResult{}, err
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = DefaultRebuildBatchSize
	}
	cfg = cfg.withDefaults()
	if cfg.FS == nil {
		if ents, err := os.ReadDir(cfg.Dir); err == nil && len(ents) > 0 {
			return RebuildResult{}, fmt.Errorf("%w: %s has %d entries", ErrNotEmpty, cfg.Dir, len(ents))
		}
	}
	db, err := store.Open(cfg.Dir, store.Options{FS: cfg.FS, MemTableSize: cfg.MemTableSize, Logger: pebbleLogger{cfg.Logger}})
	if err != nil {
		return RebuildResult{}, err
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	if a, err := db.Applied(); err != nil || a != 0 {
		return RebuildResult{}, errors.Join(err, fmt.Errorf("%w: %s already holds models through sequence %d", ErrNotEmpty, cfg.Dir, a))
	}
	w, err := db.NewWriter()
	if err != nil {
		return RebuildResult{}, err
	}
	defer func() { err = errors.Join(err, w.Close()) }() // syncs the last batch
	w.SetRecorder(cfg.recordBatch)

	name := cfg.names().SessionsStream()
	stream, err := cfg.JetStream.Stream(ctx, name)
	if err != nil {
		return RebuildResult{}, fmt.Errorf("projector: stream %s: %w", name, err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		return RebuildResult{}, fmt.Errorf("projector: stream %s: %w", name, err)
	}
	last := info.State.LastSeq
	if until == 0 || until > last {
		until = last
	}
	if until > 0 && info.State.Msgs > 0 {
		if err := readLog(ctx, stream, cfg.names().AllSessions(), w, cfg.BatchSize, until); err != nil {
			return RebuildResult{}, err
		}
	}
	if err := db.Flush(); err != nil {
		return RebuildResult{}, err
	}
	return RebuildResult{Applied: w.Applied()}, nil
}

// readLog applies the messages of subject from sequence 1 through until to w
// with an ordered consumer.
func readLog(ctx context.Context, s jetstream.Stream, subject string, w *store.Writer, batch int, until uint64) error {
	return readLogUntil(ctx, s, subject, w, batch, logRead{}, func(_ jetstream.Msg, seq, pending uint64) (bool, bool) {
		if seq > until {
			return true, true
		}
		return seq == until || pending == 0, false
	})
}

// logRead says where readLogUntil starts and whom it tells.
type logRead struct {
	from     uint64       // first stream sequence to read; 0 or 1: the first
	prog     *progress    // receives the applied sequence; nil: none
	onCommit func(Commit) // told of each commit, if set
}

// readLogUntil applies the messages of subject from sequence o.from to w
// until stop says done.
func readLogUntil(ctx context.Context, s jetstream.Stream, subject string, w *store.Writer, batch int, o logRead,
	stop func(msg jetstream.Msg, seq, pending uint64) (done, beyond bool)) error {
	occ := jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}}
	if o.from > 1 {
		occ.DeliverPolicy, occ.OptStartSeq = jetstream.DeliverByStartSequencePolicy, o.from
	}
	cons, err := s.OrderedConsumer(ctx, occ)
	if err != nil {
		return fmt.Errorf("projector: ordered consumer: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Decoded entries waiting for the pump are the bulk of the heap the
	// garbage collector scans: a few thousand keep the pump fed.
	ahead := max(min(2*batch, maxDecodedAhead)/rebuildChunk, 2) // deliveries
	msgs := make(chan *delivery, ahead)
	dec := startDecoders(ahead)
	defer func() { cancel(); dec.stop() }() // at return, once the handlers' ctx has ended
	cc, err := cons.Consume(dec.chunkHandler(ctx, msgs, rebuildChunk, stop), jetstream.PullMaxMessages(2*batch))
	if err != nil {
		return fmt.Errorf("projector: consume: %w", err)
	}
	prog := o.prog
	if prog == nil {
		prog = new(progress)
	}
	pu := &pump{w: w, batch: batch, prog: prog, stop: stop, full: true, onCommit: o.onCommit}
	err = pu.run(ctx, msgs)
	if serr := w.Sync(); err == nil {
		err = serr // the last batch is in
	}
	prog.applied.Store(w.Applied())
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	cancel()
	cc.Stop()
	<-cc.Closed()
	return err
}

// Dump opens the database in dir read-only and returns its digest, calling
// fn (if not nil) with every key and value in key order. The projector using
// dir must be stopped: Pebble allows one process per database.
func Dump(dir string, fn func(key, value []byte) error) (Digest, error) {
	if ents, err := os.ReadDir(dir); err != nil || len(ents) == 0 {
		return Digest{}, fmt.Errorf("projector: %s holds no database (%v)", dir, err)
	}
	db, err := store.Open(dir, store.Options{ReadOnly: true})
	if err != nil {
		return Digest{}, err
	}
	defer func() { _ = db.Close() }() // opened read-only: nothing to lose
	return db.Dump(fn)
}
