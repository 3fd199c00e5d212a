package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/services/orchestrator"
	"github.com/nats-io/nats.go"
)

// eventTypeOf reads the type of a live event and its session (from the
// subject) without decoding it: an event's envelope starts with its schema
// version and its type, before any nested "type" member.
func eventTypeOf(msg *nats.Msg) (ev struct{ Type, SessionID string }, ok bool) {
	sid, ok := strings.CutPrefix(msg.Subject, events.Names{}.EventSubject(events.DefaultRef("")))
	if !ok {
		return ev, false
	}
	const key = `"type":"`
	i := bytes.Index(msg.Data, []byte(key))
	if i < 0 {
		return ev, false
	}
	rest := msg.Data[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ev, false
	}
	ev.Type, ev.SessionID = string(rest[:j]), sid
	return ev, true
}

// flatten returns the durations of every row, sorted.
func flatten(rows [][]time.Duration) []time.Duration {
	var all []time.Duration
	for _, r := range rows {
		all = append(all, r...)
	}
	slices.Sort(all)
	return all
}

// liveHeap is the heap in use after two collections (the first frees the
// garbage, the second what sync.Pool caches kept through the first: the
// NATS server pools its block buffers) plus the goroutine stacks in use
// (each resident session has its actor's goroutine).
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc + m.StackInuse)
}

// cacheExpiry is how long the NATS file store keeps a message block's cache
// after its last use (nats-server's defaultCacheBufferExpiration), plus a
// margin.
const cacheExpiry = 11 * time.Second

// idleMemory measures the heap per idle session, against before (the heap
// before the first session was created), in four states: just settled;
// shrunk (the orchestrator's ShrinkAfter elapsed); idle, once the NATS
// server has dropped its caches of the run's messages (cacheExpiry later);
// and evicted (EvictIdle: nothing of the sessions left in the
// orchestrator). Idle minus evicted is what the orchestrator itself holds
// per resident idle session, its actor's goroutine stack included; what is
// left after eviction is the NATS server's per-subject state and its
// 2-minute window of message ids, and whatever else of the run stays in the
// process (the projector lag probe's Pebble memtable).
func idleMemory(ctx context.Context, w io.Writer, orch *orchestrator.Orchestrator, n int, before int64, memprofile string) error {
	settled := liveHeap()
	wait := func(what string, done func(sessions, shrunk int) bool) error {
		deadline := time.Now().Add(30 * time.Second)
		for {
			if s, sh := orch.Resident(); done(s, sh) {
				return nil
			}
			if time.Now().After(deadline) {
				s, sh := orch.Resident()
				return fmt.Errorf("bench: %s: not within 30s (%d sessions resident, %d shrunk)", what, s, sh)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	if err := wait("every idle session shrinks", func(s, sh int) bool { return s == n && sh == n }); err != nil {
		return err
	}
	shrunk := liveHeap()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(cacheExpiry):
	}
	idle := liveHeap()
	if memprofile != "" {
		f, err := os.Create(memprofile)
		if err != nil {
			return err
		}
		if err := errors.Join(pprof.WriteHeapProfile(f), f.Close()); err != nil {
			return fmt.Errorf("heap profile: %w", err)
		}
	}
	orch.EvictIdle()
	if err := wait("every idle session leaves memory", func(s, _ int) bool { return s == 0 }); err != nil {
		return err
	}
	evicted := liveHeap()
	kb := func(b int64) float64 { return float64(b) / float64(n) / 1024 }
	own := idle - evicted
	fmt.Fprintf(w, "memory per idle session, KB of heap after GC plus goroutine stacks (whole process: against the same before the first session):\n")
	fmt.Fprintf(w, "  just settled            whole process %6.1f  orchestrator's own %5.1f (decoded entries and harness)\n", kb(settled-before), kb(settled-shrunk+own))
	fmt.Fprintf(w, "  shrunk (ShrinkAfter)    whole process %6.1f  orchestrator's own %5.1f (stored records only)\n", kb(shrunk-before), kb(own))
	fmt.Fprintf(w, "  idle, NATS caches gone  whole process %6.1f  (%s later: the server's block caches expired)\n", kb(idle-before), cacheExpiry)
	fmt.Fprintf(w, "  evicted                 whole process %6.1f  (no session in the orchestrator: NATS per-subject state and 2-minute dedup window, the projector probe)\n", kb(evicted-before))
	return nil
}
