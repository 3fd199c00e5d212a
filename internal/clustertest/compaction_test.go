//go:build cluster

package clustertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cairn-agents/cairn/pkg/compactbus"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/follow"
	"github.com/cairn-agents/cairn/pkg/session"
)

// writeScript writes the built-in demo script (cmd/cairn/demo/script.json)
// with a context window of window tokens to dir, for the orchestrators and
// the compactors. A small window makes sessions compact on their own (past
// window − window/4 tokens) and leaves something to compact when asked.
func writeScript(t *testing.T, dir string, window int64) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "cmd", "cairn", "demo", "script.json"))
	if err != nil {
		t.Fatal(err)
	}
	var script map[string]any
	if err := json.Unmarshal(data, &script); err != nil {
		t.Fatal(err)
	}
	defaults, ok := script["defaults"].(map[string]any)
	if !ok {
		t.Fatal("the demo script has no defaults object")
	}
	defaults["contextWindow"] = window
	out, err := json.MarshalIndent(script, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "script.json")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// compactions is what the compactors answered.
type compactions struct {
	answered map[string]map[string]int // session → request id → successful answers
	failed   []string                  // answers carrying an error
	results  int                       // answers in all
}

// waitCompactions waits until the compactors have taken every request
// (the work queue is empty), reads every answer in CAIRN_RESULTS, and waits
// (a while) until each answered request has its entry in the log.
func waitCompactions(t *testing.T, ctx context.Context, js jetstream.JetStream, log *session.JetStreamLog, runs []*sessionRun) compactions {
	t.Helper()
	n := events.Names{}
	poll(t, ctx, 2*time.Minute, "the compaction work queue to empty", func() (bool, string) {
		info, err := streamInfo(ctx, js, n.CompactionsStream())
		if err != nil {
			return false, err.Error()
		}
		return info.State.Msgs == 0, fmt.Sprintf("%d requests queued", info.State.Msgs)
	})

	c := compactions{answered: map[string]map[string]int{}}
	var mu sync.Mutex
	f, err := follow.Start(ctx, js, follow.Config{Stream: n.ResultsStream(), Filter: n.AllResults(), From: 1}, func(m jetstream.Msg) {
		r, err := compactbus.DecodeResult(m.Data())
		if err != nil {
			return // a tool result
		}
		mu.Lock()
		defer mu.Unlock()
		c.results++
		if r.Error != "" {
			c.failed = append(c.failed, fmt.Sprintf("%s request %s by %s: %s", r.SessionID, r.RequestID, r.Worker, r.Error))
			return
		}
		if c.answered[r.SessionID] == nil {
			c.answered[r.SessionID] = map[string]int{}
		}
		c.answered[r.SessionID][r.RequestID]++
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	info, err := streamInfo(ctx, js, n.ResultsStream())
	if err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, time.Minute, "every stored result to be read", func() (bool, string) {
		return f.Next() > info.State.LastSeq, fmt.Sprintf("read up to %d of %d", f.Next()-1, info.State.LastSeq)
	})
	f.Stop()

	// An answer is applied by the session's owner a moment later, unless
	// that owner lost the session meanwhile (then the answer is abandoned;
	// see checkCompactions): wait a while, not for ever.
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		missing := ""
		for _, r := range runs {
			recs, err := log.ReadStream(ctx, events.DefaultRef(r.id))
			if err != nil {
				missing = err.Error()
				break
			}
			have := compactionRequests(r.id, recs)
			for req := range c.answered[r.id] {
				if have[req] == 0 {
					missing = fmt.Sprintf("%s: request %s", r.id, req)
				}
			}
		}
		if missing == "" || time.Now().After(deadline) {
			return c
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for answered compactions to be applied: %v (last: %s)", ctx.Err(), missing)
		case <-tick.C: // polling pace
		}
	}
}

// compactionRequests maps the request id of each compaction entry (derived
// as pkg/compactbus does, from the leaf it was computed at) to the number of
// entries. The leaf is the entry's parent, unless refusals were recorded
// while the summary was written (a command_rejected entry is appended at
// once, even then): the compaction goes under them, so the leaf is the
// nearest ancestor that is not one.
func compactionRequests(sid string, recs []session.Record) map[string]int {
	byID := map[string]*events.Entry{}
	for i := range recs {
		byID[recs[i].Entry.ID] = &recs[i].Entry
	}
	out := map[string]int{}
	for _, r := range recs {
		e := r.Entry
		if e.Type != events.EntryCompaction {
			continue
		}
		leaf := e.ParentID
		for leaf != nil && byID[*leaf] != nil && byID[*leaf].Type == events.EntryCommandRejected {
			leaf = byID[*leaf].ParentID
		}
		id := ""
		if leaf != nil {
			id = *leaf
		}
		out[compactbus.RequestID(events.DefaultRef(sid), "compaction", id, "")]++
	}
	return out
}

// checkCompactions returns what is wrong with a session's compactions: a
// compact command not applied by exactly one compaction entry, an answered
// request with more than one entry, a compaction entry no compactor
// answered. An answered request with no entry is not wrong: its owner lost
// the session (an orchestrator killed, or a lease lapsed while NATS elected
// a leader) and cancelled it; the next owner compacts again when the
// threshold says so. The test counts those.
func checkCompactions(sid string, recs []session.Record, asked []string, answered map[string]int) []string {
	var problems []string
	for _, id := range asked {
		n := 0
		for _, r := range recs {
			if r.Entry.CommandID == id && r.Entry.Type == events.EntryCompaction {
				n++
			}
		}
		if n != 1 {
			problems = append(problems, fmt.Sprintf("%s: compact command %s applied by %d compaction entries, want 1 (%s)", sid, id, n, rejection(recs, id)))
		}
	}
	have := compactionRequests(sid, recs)
	for req, n := range have {
		if n != 1 {
			problems = append(problems, fmt.Sprintf("%s: compaction request %s has %d entries, want 1", sid, req, n))
		}
		if answered[req] == 0 {
			problems = append(problems, fmt.Sprintf("%s: a compaction entry (request %s) that no compactor answered", sid, req))
		}
	}
	return problems
}

// poll calls cond every 200ms until it reports true, and fails the test
// after within, with what cond said last.
func poll(t *testing.T, ctx context.Context, within time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, last := cond()
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v (last: %s)", what, ctx.Err(), last)
		case <-deadline.C:
			t.Fatalf("waiting for %s: not within %s (last: %s)", what, within, last)
		case <-tick.C:
		}
	}
}

// describe lists the last n entries of recs, one short line each.
func describe(recs []session.Record, n int) string {
	var b []byte
	for _, r := range recs[max(0, len(recs)-n):] {
		e := r.Entry
		what := e.Type
		if m := e.Message; m != nil {
			what = m.Role
			if m.StopReason != "" {
				what += "/" + string(m.StopReason)
			}
		}
		b = fmt.Appendf(b, "\n    %d %s %s", r.Seq, e.ID, what)
		if e.CommandID != "" {
			b = fmt.Appendf(b, " cmd=%s", e.CommandID)
		}
		if e.ParentID != nil {
			b = fmt.Appendf(b, " parent=%s", *e.ParentID)
		}
	}
	return string(b)
}
