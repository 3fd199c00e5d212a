package store

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/services/projector/internal/synth"
	"github.com/cockroachdb/pebble/v2"
)

// benchLog returns n entries, cycling a generated log of at most 200k.
func benchLog(n int) func(i int) synth.Msg {
	log := synth.Log(42, 1000, min(n, 200000))
	return func(i int) synth.Msg { return log[i%len(log)] }
}

// BenchmarkApply measures entries/s through the projection into a Pebble
// database on disk (NoSync, 64 MiB memtable; batches of 256 and 4096), next to raw
// Pebble batch writes of the same entries under the same options: the
// projector's cost over storing the log once.
func BenchmarkApply(b *testing.B) {
	for _, batch := range []int{256, 4096} {
		b.Run(fmt.Sprintf("projector-batch-%d", batch), func(b *testing.B) { benchProjector(b, batch) })
	}
	// The serial part of the live path, where entries arrive decoded by the
	// NATS delivery goroutine.
	b.Run("projector-predecoded-batch-256", func(b *testing.B) { benchPredecoded(b, 256) })
	b.Run("raw-pebble", func(b *testing.B) {
		msg := benchLog(b.N)
		db, err := pebble.Open(b.TempDir(), &pebble.Options{MemTableSize: DefaultMemTableSize, MemTableStopWritesThreshold: 4, Logger: quietLogger{}})
		if err != nil {
			b.Fatal(err)
		}
		defer func() {
			if err := db.Close(); err != nil {
				b.Errorf("close db: %v", err)
			}
		}()
		batch := db.NewBatch()
		b.ResetTimer()
		cpu := cpuTime()
		for i := range b.N {
			m := msg(i)
			if err := batch.Set([]byte(entryKey(events.DefaultRef(m.Subject), uint64(i+1))), m.Data, nil); err != nil {
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
		if err := batch.Commit(pebble.NoSync); err != nil {
			b.Fatal(err)
		}
		batch.Close()
		reportCPU(b, cpu)
	})
}

// cpuTime is the process's user and system CPU time so far. On a shared
// machine wall-clock rates swing with other load; CPU time per entry is the
// steadier comparison.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports entries/s by wall clock and CPU µs per entry since start.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(float64(cpuTime()-start)/1e3/float64(b.N), "cpu-µs/entry")
}

func benchProjector(b *testing.B, batch int) {
	msg := benchLog(b.N)
	db, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			b.Errorf("close db: %v", err)
		}
	}()
	w, err := db.NewWriter()
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := w.Close(); err != nil {
			b.Errorf("close w: %v", err)
		}
	}()
	b.ResetTimer()
	cpu := cpuTime()
	for i := range b.N {
		m := msg(i)
		if _, err := w.Apply(uint64(i+1), m.Subject, m.Data); err != nil {
			b.Fatal(err)
		}
		if w.Pending() >= batch {
			if err := w.Commit(); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := w.Commit(); err != nil {
		b.Fatal(err)
	}
	reportCPU(b, cpu)
}

func benchPredecoded(b *testing.B, batch int) {
	log := synth.Log(42, 1000, min(b.N, 50000))
	decoded := make([]events.Entry, len(log))
	for i, m := range log {
		e, err := events.DecodeEntry(m.Data)
		if err != nil {
			b.Fatal(err)
		}
		decoded[i] = e
	}
	db, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			b.Errorf("close db: %v", err)
		}
	}()
	w, err := db.NewWriter()
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := w.Close(); err != nil {
			b.Errorf("close w: %v", err)
		}
	}()
	b.ResetTimer()
	cpu := cpuTime()
	for i := range b.N {
		j := i % len(log)
		if _, err := w.ApplyDecoded(uint64(i+1), log[j].Subject, log[j].Data, &decoded[j], nil); err != nil {
			b.Fatal(err)
		}
		if w.Pending() >= batch {
			if err := w.Commit(); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := w.Commit(); err != nil {
		b.Fatal(err)
	}
	reportCPU(b, cpu)
}
