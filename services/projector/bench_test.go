package projector

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/services/projector/internal/store"
	"github.com/cairn-agents/cairn/services/projector/internal/synth"
	"github.com/cockroachdb/pebble/v2"
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
// on disk) over a log of CAIRN_BENCH_ENTRIES entries from 1,000 sessions, and,
// in the same run, raw Pebble batch writes of the same entries (one key each,
// batches of 256, NoSync, the same memtable): the ceiling a projection could
// reach. Run with -benchtime 1x.
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

	b.Run("projector", func(b *testing.B) {
		cpu := cpuTime()
		for range b.N {
			res, err := Rebuild(context.Background(), Config{JetStream: js, Dir: b.TempDir()}, 0)
			if err != nil {
				b.Fatal(err)
			}
			if res.Applied != uint64(n) {
				b.Fatalf("applied %d of %d", res.Applied, n)
			}
		}
		reportCPU(b, n, cpu)
	})
	b.Run("raw-pebble", func(b *testing.B) {
		g := synth.New(99, 1000) // the same entries, generated outside the timer in chunks
		chunk := make([]synth.Msg, 0, 10000)
		var cpu time.Duration // only the writes, not the generation
		for range b.N {
			db, err := pebble.Open(b.TempDir(), &pebble.Options{MemTableSize: store.DefaultMemTableSize, MemTableStopWritesThreshold: 4, Logger: quiet{}})
			if err != nil {
				b.Fatal(err)
			}
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
			db.Close()
		}
		reportCPU(b, n, cpuTime()-cpu)
	})
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
	p, err := New(Config{JetStream: js, Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	sentAt := make([]time.Time, b.N+1)
	lags := make([]time.Duration, 0, b.N)
	done := make(chan struct{})
	var next uint64 = 1
	p.onCommit = func(applied uint64) {
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		for ; next <= applied && next <= uint64(b.N); next++ {
			lags = append(lags, now.Sub(sentAt[next]))
		}
		if applied == uint64(b.N) {
			close(done)
		}
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
	p.Close()
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
// entries per iteration since start.
func reportCPU(b *testing.B, n int, start time.Duration) {
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(float64(cpuTime()-start)/1e3/float64(n*b.N), "cpu-µs/entry")
}
