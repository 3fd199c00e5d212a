package projector

import (
	"context"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/services/projector/internal/store"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// The gate of the live database: a switch-over waits for the queries in
// progress, holds new ones until the new database is in, and gives up (open
// again, nothing replaced) when a query does not end in time.
func TestLiveGate(t *testing.T) {
	open := func(name string) *store.DB {
		db, err := store.Open(name, store.Options{FS: vfs.NewMem(), MemTableSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := db.Close(); err != nil {
				t.Errorf("close db: %v", err)
			}
		})
		return db
	}
	oldDB, newDB := open("old"), open("new")
	l := newLive(oldDB)
	ctx := context.Background()

	db, release, err := l.acquire(ctx)
	if err != nil || db != oldDB {
		t.Fatalf("acquire: %v %v", db, err)
	}
	closed := make(chan bool, 1)
	go func() { closed <- l.close(time.Minute) }()
	// A query arriving now waits for the switch-over, then reads the new database.
	waitFor(t, "the gate to close", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.mu.closed != nil
	})
	got := make(chan *store.DB, 1)
	go func() {
		db, rel, err := l.acquire(ctx)
		if err != nil {
			t.Error(err)
			got <- nil
			return
		}
		rel()
		got <- db
	}()
	select {
	case ok := <-closed:
		t.Fatalf("close returned %v with a query in progress", ok)
	case db := <-got:
		t.Fatalf("a query got %v while the gate was closed", db)
	default:
	}
	release()
	if !<-closed {
		t.Fatal("close gave up after the last query ended")
	}
	l.open(newDB)
	if db := <-got; db != newDB {
		t.Fatalf("the waiting query read %v, want the new database", db)
	}

	// A query that does not end: close gives up and lets queries in again.
	_, stuck, err := l.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if l.close(10 * time.Millisecond) {
		t.Fatal("close waited out a query that never ended")
	}
	db, rel, err := l.acquire(ctx)
	if err != nil || db != newDB {
		t.Fatalf("after giving up: %v %v", db, err)
	}
	rel()
	stuck()
	// A query waiting while closed ends with its context.
	if !l.close(time.Minute) {
		t.Fatal("close with no query in progress")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := l.acquire(cctx); err == nil {
		t.Fatal("acquire on a closed gate with a cancelled context succeeded")
	}
	l.open(nil)
}
