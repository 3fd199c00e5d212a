package projector

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/services/projector/internal/store"
	"github.com/cairn-agents/cairn/services/projector/internal/synth"
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/batchrepr"
	"github.com/nats-io/nats.go/jetstream"
)

// benchEntries is the log size of BenchmarkRebuild: CAIRN_BENCH_ENTRIES,
// default 100,000.
func benchEntries() int {
	if n, err := strconv.Atoi(os.Getenv("CAIRN_BENCH_ENTRIES")); err == nil && n > 0 {
		return n
	}
	return 100000
}

// BenchmarkRebuild measures `projector rebuild` end to end (an embedded NATS
// server with a file store, an ordered consumer, decoding, projection, Pebble
// on disk; not the digest the command prints afterwards with Dump, reported
// apart as digest-cpu-µs/entry) over a log of CAIRN_BENCH_ENTRIES entries from 1,000 sessions, and,
// in the same run, two baselines of raw Pebble batch writes under the same
// options (NoSync, the same memtable):
//
//   - raw-pebble: one key per entry, the entry's bytes, batches of 256: the
//     cost of storing the log once;
//   - raw-pebble-same-writes: exactly the keys, values and deletions the
//     projector's rebuild wrote, in its batches (recorded by a rebuild outside
//     the timer): the cost of the projector's writes without reading the
//     log, decoding or projecting.
//
// It prints the projector's rate as a share of each. Run with -benchtime 1x.
func BenchmarkRebuild(b *testing.B) {
	n := benchEntries()
	_, js := sessionsStream(b)
	g := synth.New(99, 1000)
	msgs := make([]synth.Msg, 0, 2000)
	for i := 0; i < n; i += len(msgs) {
		msgs = msgs[:0]
		for j := 0; j < 2000 && i+j < n; j++ {
			msgs = append(msgs, g.Next())
		}
		publish(b, js, msgs)
	}

	var proj, raw, same benchRate
	b.Run("projector", func(b *testing.B) {
		cpu := cpuTime()
		var digest time.Duration // CPU of the digests, outside the timer
		for range b.N {
			dir := b.TempDir()
			res, err := Rebuild(context.Background(), Config{JetStream: js, Dir: dir}, 0)
			if err != nil {
				b.Fatal(err)
			}
			if res.Applied != uint64(n) {
				b.Fatalf("applied %d of %d", res.Applied, n)
			}
			b.StopTimer()
			start := cpuTime()
			if _, err := Dump(dir, nil); err != nil { // what the rebuild command prints after Rebuild
				b.Fatal(err)
			}
			digest += cpuTime() - start
			b.StartTimer()
		}
		proj = reportCPU(b, n, cpu+digest)
		b.ReportMetric(float64(digest)/1e3/float64(n*b.N), "digest-cpu-µs/entry")
	})
	b.Run("raw-pebble", func(b *testing.B) {
		g := synth.New(99, 1000) // the same entries, generated outside the timer in chunks
		chunk := make([]synth.Msg, 0, 10000)
		var cpu time.Duration // only the writes, not the generation
		for range b.N {
			db := openRaw(b)
			batch := db.NewBatch()
			for i := 0; i < n; {
				b.StopTimer()
				chunk = chunk[:0]
				for j := 0; j < 10000 && i+j < n; j++ {
					chunk = append(chunk, g.Next())
				}
				b.StartTimer()
				start := cpuTime()
				for _, m := range chunk {
					i++
					key := strconv.AppendUint([]byte(m.Subject+"/"), uint64(i), 16)
					if err := batch.Set(key, m.Data, nil); err != nil {
						b.Fatal(err)
					}
					if batch.Count() >= 256 {
						if err := batch.Commit(pebble.NoSync); err != nil {
							b.Fatal(err)
						}
						batch.Close()
						batch = db.NewBatch()
					}
				}
				cpu += cpuTime() - start
			}
			if err := batch.Commit(pebble.NoSync); err != nil {
				b.Fatal(err)
			}
			batch.Close()
			if err := db.Close(); err != nil {
				b.Fatalf("close db: %v", err)
			}
		}
		raw = reportCPU(b, n, cpuTime()-cpu)
	})
	b.Run("raw-pebble-same-writes", func(b *testing.B) {
		b.StopTimer()
		rec := recordRebuild(b, js, n)
		b.StartTimer()
		var cpu time.Duration
		for range b.N {
			cpu += rec.replay(b)
		}
		same = reportCPU(b, n, cpuTime()-cpu)
		b.ReportMetric(float64(rec.ops)/float64(n), "writes/entry")
		b.ReportMetric(float64(rec.bytes)/float64(n), "bytes/entry")
	})
	if proj.perSec > 0 && raw.perSec > 0 && same.perSec > 0 {
		fmt.Printf("rebuild vs raw-pebble:             %5.1f%% of entries/s, %5.1f%% of cpu-µs/entry\n",
			100*proj.perSec/raw.perSec, 100*raw.cpuPer/proj.cpuPer)
		fmt.Printf("rebuild vs raw-pebble-same-writes: %5.1f%% of entries/s, %5.1f%% of cpu-µs/entry\n",
			100*proj.perSec/same.perSec, 100*same.cpuPer/proj.cpuPer)
	}
}

// benchRate is what reportCPU reported.
type benchRate struct{ perSec, cpuPer float64 }

func openRaw(b *testing.B) *pebble.DB {
	db, err := pebble.Open(b.TempDir(), &pebble.Options{MemTableSize: store.DefaultMemTableSize, MemTableStopWritesThreshold: 4, Logger: quiet{}})
	if err != nil {
		b.Fatal(err)
	}
	return db
}

// recording is the projector's batches of one rebuild, in a file: each a
// uvarint length then the batch's Pebble representation.
type recording struct {
	path       string
	ops, bytes int64 // writes (sets and deletes) and key+value bytes
}

// recordRebuild runs a rebuild of the stream's n entries and records its
// batches.
func recordRebuild(b *testing.B, js jetstream.JetStream, n int) *recording {
	rec := &recording{path: filepath.Join(b.TempDir(), "batches")}
	f, err := os.Create(rec.path)
	if err != nil {
		b.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	var werr error
	cfg := Config{JetStream: js, Dir: b.TempDir()}
	cfg.recordBatch = func(repr []byte) {
		bw.Write(binary.AppendUvarint(nil, uint64(len(repr))))
		if _, err := bw.Write(repr); err != nil && werr == nil {
			werr = err // a bufio.Writer's error sticks: this one covers both writes
		}
		r := batchrepr.Read(repr)
		for {
			_, k, v, ok, err := r.Next()
			if err != nil && werr == nil {
				werr = err
			}
			if !ok {
				break
			}
			rec.ops++
			rec.bytes += int64(len(k) + len(v))
		}
	}
	res, err := Rebuild(context.Background(), cfg, 0)
	if err != nil {
		b.Fatal(err)
	}
	if res.Applied != uint64(n) {
		b.Fatalf("recording rebuild applied %d of %d", res.Applied, n)
	}
	if err := errors.Join(werr, bw.Flush(), f.Close()); err != nil {
		b.Fatal(err)
	}
	return rec
}

// replay writes the recorded batches to a fresh database, one Pebble batch
// per recorded batch, op by op. The file is read and parsed in chunks
// outside the timer; it returns the CPU time spent writing.
func (rec *recording) replay(b *testing.B) (writing time.Duration) {
	b.StopTimer()
	f, err := os.Open(rec.path)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := f.Close(); err != nil {
			b.Errorf("close f: %v", err)
		}
	}()
	br := bufio.NewReaderSize(f, 1<<20)
	db := openRaw(b)
	defer func() {
		if err := db.Close(); err != nil {
			b.Errorf("close db: %v", err)
		}
	}()
	type op struct {
		del  bool
		k, v []byte
	}
	var batches [][]op
	for eof := false; !eof; {
		batches = batches[:0]
		for size := 0; size < 64<<20; {
			l, err := binary.ReadUvarint(br)
			if errors.Is(err, io.EOF) {
				eof = true
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			repr := make([]byte, l)
			if _, err := io.ReadFull(br, repr); err != nil {
				b.Fatal(err)
			}
			size += len(repr)
			var ops []op
			r := batchrepr.Read(repr)
			for {
				kind, k, v, ok, err := r.Next()
				if err != nil {
					b.Fatal(err)
				}
				if !ok {
					break
				}
				switch kind {
				case pebble.InternalKeyKindSet:
					ops = append(ops, op{k: k, v: v})
				case pebble.InternalKeyKindDelete:
					ops = append(ops, op{del: true, k: k})
				default:
					b.Fatalf("recorded batch holds an operation of kind %v", kind)
				}
			}
			batches = append(batches, ops)
		}
		b.StartTimer()
		start := cpuTime()
		for _, ops := range batches {
			batch := db.NewBatch()
			for _, o := range ops {
				var err error
				if o.del {
					err = batch.Delete(o.k, nil)
				} else {
					err = batch.Set(o.k, o.v, nil)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			if err := batch.Commit(pebble.NoSync); err != nil {
				b.Fatal(err)
			}
			batch.Close()
		}
		writing += cpuTime() - start
		b.StopTimer()
	}
	b.StartTimer()
	return writing
}

type quiet struct{}

func (quiet) Infof(string, ...any)  {}
func (quiet) Errorf(string, ...any) {}
func (quiet) Fatalf(f string, a ...any) {
	panic(fmt.Sprintf(f, a...))
}

// BenchmarkLiveLag measures how long an entry takes from its publish (the
// call; the stream holds only this benchmark's entries, so entry i has
// sequence i) to the commit of the batch holding it,
// while b.N entries from 1,000 sessions are published in bursts of 20 every
// 5 ms (~4,000 entries/s offered). Reports p50, p99 and max in ms.
func BenchmarkLiveLag(b *testing.B) {
	_, js := sessionsStream(b)
	var mu sync.Mutex
	sentAt := make([]time.Time, b.N+1)
	lags := make([]time.Duration, 0, b.N)
	done := make(chan struct{})
	var next uint64 = 1
	onCommit := func(c Commit) {
		mu.Lock()
		defer mu.Unlock()
		for ; next <= c.Applied && next <= uint64(b.N); next++ {
			lags = append(lags, c.At.Sub(sentAt[next]))
		}
		if c.Applied == uint64(b.N) {
			close(done)
		}
	}
	p, err := New(Config{JetStream: js, Dir: b.TempDir(), OnCommit: onCommit})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- p.Run(ctx) }()
	g := synth.New(5, 1000)
	b.ResetTimer()
	tick := time.NewTicker(5 * time.Millisecond)
	for sent := 0; sent < b.N; {
		<-tick.C
		var futures []jetstream.PubAckFuture
		for j := 0; j < 20 && sent < b.N; j++ {
			m := g.Next()
			mu.Lock()
			sentAt[sent+1] = time.Now()
			mu.Unlock()
			f, err := js.PublishAsync(m.Subject, m.Data)
			if err != nil {
				b.Fatal(err)
			}
			futures = append(futures, f)
			sent++
		}
		for _, f := range futures {
			select {
			case <-f.Ok():
			case err := <-f.Err():
				b.Fatal(err)
			}
		}
	}
	tick.Stop()
	<-done
	b.StopTimer()
	cancel()
	if err := <-runErr; err != nil {
		b.Fatal(err)
	}
	if err := p.Close(); err != nil {
		b.Fatalf("close p: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(lags)
	if len(lags) == 0 {
		b.Fatal("no lag measured")
	}
	q := func(f float64) float64 { return float64(lags[int(f*float64(len(lags)-1))]) / 1e6 }
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(q(1), "max-ms")
}

// cpuTime is the process's user and system CPU time so far (the embedded NATS
// server's included). On a shared machine wall-clock rates swing with other
// load; CPU time per entry is the steadier comparison.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports entries/s by wall clock and CPU µs per entry for n
// entries per iteration since start, and returns them.
func reportCPU(b *testing.B, n int, start time.Duration) benchRate {
	r := benchRate{
		perSec: float64(n*b.N) / b.Elapsed().Seconds(),
		cpuPer: float64(cpuTime()-start) / 1e3 / float64(n*b.N),
	}
	b.ReportMetric(r.perSec, "entries/s")
	b.ReportMetric(r.cpuPer, "cpu-µs/entry")
	return r
}
