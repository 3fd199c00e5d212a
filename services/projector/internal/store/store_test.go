package store

import (
	"github.com/cairn-agents/cairn/pkg/events"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/cairn-agents/cairn/services/projector/internal/synth"
	"github.com/cockroachdb/pebble/v2/vfs"
)

func openMem(t testing.TB, fs vfs.FS) *DB {
	t.Helper()
	db, err := Open("db", Options{FS: fs, MemTableSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// applyAll applies log[from-1:] (sequence i+1 for log[i]) committing every
// batch entries.
func applyAll(t testing.TB, db *DB, log []synth.Msg, batch int) {
	t.Helper()
	w, err := db.NewWriter()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := w.Close(); err != nil {
			t.Errorf("close w: %v", err)
		}
	}()
	for i := int(w.Applied()); i < len(log); i++ {
		if _, err := w.Apply(uint64(i+1), log[i].Subject, log[i].Data); err != nil {
			t.Fatal(err)
		}
		if w.Pending() >= batch {
			if err := w.Commit(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
}

func digest(t testing.TB, db *DB) Digest {
	t.Helper()
	d, err := db.Dump(nil)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The models do not depend on batch boundaries: the same random log applied
// with batch sizes 1, 10 and 100 gives identical databases.
func TestBatchSizesGiveIdenticalDumps(t *testing.T) {
	log := synth.Log(7, 20, 1000)
	var want Digest
	for _, batch := range []int{1, 10, 100} {
		db := openMem(t, vfs.NewMem())
		applyAll(t, db, log, batch)
		got := digest(t, db)
		if err := db.Close(); err != nil {
			t.Fatalf("close db: %v", err)
		}
		if got.Applied != uint64(len(log)) {
			t.Fatalf("batch %d: applied %d, want %d", batch, got.Applied, len(log))
		}
		if batch == 1 {
			want = got
			continue
		}
		if got != want {
			t.Fatalf("batch %d: dump %+v, batch 1 gave %+v", batch, got, want)
		}
	}
}

// A redelivered entry (sequence not above the applied one) changes nothing.
func TestRedeliveryIsIgnored(t *testing.T) {
	log := synth.Log(3, 5, 200)
	db := openMem(t, vfs.NewMem())
	defer func() {
		if err := db.Close(); err != nil {
			t.Errorf("close db: %v", err)
		}
	}()
	applyAll(t, db, log, 10)
	before := digest(t, db)
	w, err := db.NewWriter()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := w.Close(); err != nil {
			t.Errorf("close w: %v", err)
		}
	}()
	for i := 100; i < 200; i++ {
		if ok, err := w.Apply(uint64(i+1), log[i].Subject, log[i].Data); err != nil || ok {
			t.Fatalf("redelivered sequence %d: applied %v, err %v; want ignored", i+1, ok, err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if after := digest(t, db); after != before {
		t.Fatalf("dump changed after redeliveries: %+v -> %+v", before, after)
	}
}

// Crash the database at random points with Pebble's crashable file system:
// whatever survives covers exactly the sequence it records (the checkpoint is
// never ahead of, nor behind, the data), and resuming from there converges to
// the same contents as an uninterrupted run.
func TestCrashNeverAppliesTwiceOrSkips(t *testing.T) {
	const n = 600
	log := synth.Log(11, 15, n)

	// ref returns the digest of a clean run through sequence seq.
	ref := func(seq int) Digest {
		db := openMem(t, vfs.NewMem())
		defer func() {
			if err := db.Close(); err != nil {
				t.Errorf("close db: %v", err)
			}
		}()
		applyAll(t, db, log[:seq], 100)
		return digest(t, db)
	}
	full := ref(n)

	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 5 {
		fs := vfs.NewCrashableMem()
		db := openMem(t, fs)
		w, err := db.NewWriter()
		if err != nil {
			t.Fatal(err)
		}
		batch := 1 + rng.IntN(60)
		crashAt := 1 + rng.IntN(n-1)
		var clone *vfs.MemFS
		for i := range log {
			if _, err := w.Apply(uint64(i+1), log[i].Subject, log[i].Data); err != nil {
				t.Fatal(err)
			}
			if w.Pending() >= batch {
				if err := w.Commit(); err != nil {
					t.Fatal(err)
				}
			}
			if i+1 == crashAt {
				clone = fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: rng.IntN(101), RNG: rng})
			}
		}
		if err := w.Close(); err != nil {
			t.Fatalf("close w: %v", err)
		}
		if err := db.Close(); err != nil {
			t.Fatalf("close db: %v", err)
		}

		crashed := openMem(t, clone)
		got := digest(t, crashed)
		if got.Applied > uint64(crashAt) {
			t.Fatalf("trial %d: after a crash at %d the database claims sequence %d", trial, crashAt, got.Applied)
		}
		if want := ref(int(got.Applied)); got.Keys != want.Keys || got.SHA256 != want.SHA256 {
			t.Fatalf("trial %d (batch %d, crash at %d): database at applied %d differs from a clean run to %d: %+v vs %+v",
				trial, batch, crashAt, got.Applied, got.Applied, got, want)
		}
		applyAll(t, crashed, log, batch)
		if final := digest(t, crashed); final != full {
			t.Fatalf("trial %d: after resuming from %d: %+v, want %+v", trial, got.Applied, final, full)
		}
		if err := crashed.Close(); err != nil {
			t.Fatalf("close crashed: %v", err)
		}
		t.Logf("trial %d: batch %d, crash at %d, survived through %d", trial, batch, crashAt, got.Applied)
	}
}

// A summary and the usage rows are written once per batch, however many
// entries of the session the batch holds: one batch of a whole session's
// log gives the same summary, usage and database as applying it entry by
// entry.
func TestOneSessionInOneBatchEqualsOneByOne(t *testing.T) {
	log := synth.Log(5, 1, 800)
	oneByOne := openMem(t, vfs.NewMem())
	defer func() {
		if err := oneByOne.Close(); err != nil {
			t.Errorf("close oneByOne: %v", err)
		}
	}()
	applyAll(t, oneByOne, log, 1)
	oneBatch := openMem(t, vfs.NewMem())
	defer func() {
		if err := oneBatch.Close(); err != nil {
			t.Errorf("close oneBatch: %v", err)
		}
	}()
	applyAll(t, oneBatch, log, len(log))

	want, err := oneByOne.Session(events.DefaultRef("s0000"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := oneBatch.Session(events.DefaultRef("s0000"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("summary from one batch:\n%+v\nentry by entry:\n%+v", got, want)
	}
	if want.Entries != int64(len(log)) || want.ToolCalls == 0 || want.Tokens.Total == 0 {
		t.Fatalf("the log should exercise the summary: %+v", want)
	}
	wantRows, wantTotal, _, err := oneByOne.Usage(UsageFilter{})
	if err != nil {
		t.Fatal(err)
	}
	gotRows, gotTotal, _, err := oneBatch.Usage(UsageFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotRows, wantRows) || !reflect.DeepEqual(gotTotal, wantTotal) {
		t.Fatalf("usage from one batch %+v (total %+v), entry by entry %+v (total %+v)", gotRows, gotTotal, wantRows, wantTotal)
	}
	if g, w := digest(t, oneBatch), digest(t, oneByOne); g != w {
		t.Fatalf("dump from one batch %+v, entry by entry %+v", g, w)
	}
}

// CommitAsync writes what Commit writes: the same log applied with batches
// committing in the background (each next batch applied meanwhile, reads of
// the database waiting for the batch in flight) gives the same database.
func TestCommitAsyncGivesIdenticalDumps(t *testing.T) {
	log := synth.Log(7, 40, 1000)
	ref := openMem(t, vfs.NewMem())
	applyAll(t, ref, log, 1)
	want := digest(t, ref)
	if err := ref.Close(); err != nil {
		t.Fatalf("close ref: %v", err)
	}
	for _, batch := range []int{1, 10, 100} {
		db := openMem(t, vfs.NewMem())
		w, err := db.NewWriter()
		if err != nil {
			t.Fatal(err)
		}
		for i := range log {
			if _, err := w.Apply(uint64(i+1), log[i].Subject, log[i].Data); err != nil {
				t.Fatal(err)
			}
			if w.Pending() >= batch {
				if err := w.CommitAsync(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.CommitAsync(); err != nil {
			t.Fatal(err)
		}
		if err := w.Sync(); err != nil {
			t.Fatal(err)
		}
		if w.Applied() != uint64(len(log)) {
			t.Fatalf("batch %d: applied %d after Sync, want %d", batch, w.Applied(), len(log))
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if got := digest(t, db); got != want {
			t.Fatalf("batch %d with CommitAsync: %+v, Commit gave %+v", batch, got, want)
		}
		if err := db.Close(); err != nil {
			t.Fatalf("close db: %v", err)
		}
	}
}
