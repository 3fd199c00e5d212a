package projector

import (
	"sync"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/services/projector/internal/synth"
)

// OnCommit hears of every commit of the live projector, with the stream time
// of each entry it applied: together the calls cover every entry once, in
// order, and no entry is committed before the stream stored it.
func TestOnCommitReportsEveryEntry(t *testing.T) {
	_, js := sessionsStream(t)
	var mu sync.Mutex
	var commits []Commit
	var stored []time.Time
	r := start(t, Config{JetStream: js, Dir: t.TempDir(), BatchSize: 16, OnCommit: func(c Commit) {
		mu.Lock()
		defer mu.Unlock()
		stored = append(stored, c.Stored...) // Stored is only valid during the call
		c.Stored = nil
		commits = append(commits, c)
	}})
	defer r.stop(t)
	log := synth.Log(3, 10, 300)
	last := publish(t, js, log[:150])
	last = max(last, publish(t, js, log[150:]))
	waitFor(t, "every entry committed", func() bool { return r.Applied() == last })

	mu.Lock()
	defer mu.Unlock()
	if len(stored) != len(log) {
		t.Fatalf("OnCommit reported %d entries, want %d", len(stored), len(log))
	}
	prev := uint64(0)
	for i, c := range commits {
		if c.Applied <= prev {
			t.Fatalf("commit %d reports applied %d after %d", i, c.Applied, prev)
		}
		prev = c.Applied
	}
	if prev != last {
		t.Fatalf("last commit reports applied %d, want %d", prev, last)
	}
	for i, st := range stored {
		if st.IsZero() || (i > 0 && st.Before(stored[i-1])) {
			t.Fatalf("entry %d: stream time %v, previous %v; want set and in order", i, st, stored[max(i-1, 0)])
		}
	}
	end := commits[len(commits)-1].At
	if end.Before(stored[len(stored)-1]) {
		t.Fatalf("the last commit at %v precedes its entry's stream time %v", end, stored[len(stored)-1])
	}
}
