package orchestrator

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/scripted"
)

// heldModel is the test script's model, except that a prompt containing
// "hold" blocks, whatever its context says, until release is closed: a
// model call under way in a process that froze, or whose lease was given
// up meanwhile.
type heldModel struct {
	p       *scripted.Provider
	entered chan struct{}
	release chan struct{}
}

func (h *heldModel) Stream(ctx context.Context, req *llm.Request, onDelta func(events.Delta)) (events.Message, error) {
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == events.RoleUser && strings.Contains(req.Messages[n-1].Content.Text(), "hold") {
		h.entered <- struct{}{}
		<-h.release
		ctx = context.WithoutCancel(ctx)
	}
	return h.p.Stream(ctx, req, onDelta)
}

type heldModels struct{ m *heldModel }

func (s heldModels) Resolve(ref string) (llm.Provider, llm.Model, error) {
	id, ok := strings.CutPrefix(ref, "scripted/")
	if !ok || id == "" {
		return nil, llm.Model{}, errors.New("unknown model " + ref)
	}
	return s.m, s.m.p.Model(id), nil
}

func (s heldModels) Providers() []string { return []string{"scripted"} }

// fencePlatform is the test platform with one orchestrator whose lease
// clock the test moves, and whose model holds "hold" prompts. The lease TTL
// is long, so the lease loop (renewals every TTL/3) does not wake during a
// test: only the test's clock ends a lease.
type fencePlatform struct {
	*platform
	o     *Orchestrator
	model *heldModel
	clock struct {
		sync.Mutex
		now time.Time
	}
}

func newFencePlatform(t *testing.T) *fencePlatform {
	t.Helper()
	fp := &fencePlatform{platform: newPlatform(t)}
	fp.clock.now = time.Now()
	sc, err := scripted.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	fp.model = &heldModel{p: scripted.New(sc), entered: make(chan struct{}, 1), release: make(chan struct{})}
	o, err := New(Config{Conn: fp.nc, Log: fp.log, Instance: "o1", Partitions: 4, LeaseTTL: 10 * time.Minute,
		Models: heldModels{fp.model}, DefaultModel: "scripted/test", Logger: failOnRefusedMove(t)})
	if err != nil {
		t.Fatal(err)
	}
	o.leaseClock = fp.now
	fp.o = o
	kittest.Run(t, context.Background(), "orchestrator", o.Run)
	return fp
}

func (fp *fencePlatform) now() time.Time {
	fp.clock.Lock()
	defer fp.clock.Unlock()
	return fp.clock.now
}

func (fp *fencePlatform) move(d time.Duration) {
	fp.clock.Lock()
	fp.clock.now = fp.clock.now.Add(d)
	fp.clock.Unlock()
}

// holdTurn creates sid, prompts "hold" and returns once the model call is
// under way, with the actor, and the log as it stands then (the header and
// the user message).
func (fp *fencePlatform) holdTurn(t *testing.T, sid string) (*actor, []events.Entry) {
	t.Helper()
	fp.send(events.Command{ID: sid + "-c1", Type: events.CmdCreate, SessionID: sid, Tools: []string{}})
	fp.send(events.Command{ID: sid + "-c2", Type: events.CmdPrompt, SessionID: sid, Text: "hold on"})
	select {
	case <-fp.model.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the held prompt never reached the model")
	}
	es := fp.waitLog(sid, "the user message", named(sid+"-c2"))
	fp.o.mu.Lock()
	a := fp.o.mu.actors[events.DefaultRef(sid)]
	fp.o.mu.Unlock()
	if a == nil {
		t.Fatalf("no actor runs %s", sid)
	}
	return a, es
}

// sameLog fails unless sid's log is exactly want.
func (fp *fencePlatform) sameLog(t *testing.T, sid string, want []events.Entry) {
	t.Helper()
	recs := mustRecords(t, fp.platform, sid)
	var got []string
	for _, r := range recs {
		got = append(got, r.Entry.Type+"/"+r.Entry.ID)
	}
	if len(recs) != len(want) {
		t.Fatalf("the fenced instance wrote: the log is %v, want its %d entries from before the fence", got, len(want))
	}
	for i, r := range recs {
		if r.Entry.ID != want[i].ID {
			t.Fatalf("entry %d is %s, want %s", i, got[i], want[i].ID)
		}
	}
}

// A lease whose deadline has passed by the clock fences the actor's appends
// at once, before the lease loop wakes to give the partition up: the reply
// of a model call that was under way when the process froze waits, unsent,
// and is refused when the loop gives the lease up (Lost); the session's
// running mark is left for the next owner.
func TestLeasePastDeadlineFencesAppends(t *testing.T) {
	fp := newFencePlatform(t)
	a, before := fp.holdTurn(t, "f1")
	if err := a.part.writable(); err != nil {
		t.Fatalf("the partition is not writable while its lease is fresh: %v", err)
	}
	// The process "wakes" past the lease deadline: only the clock moved.
	fp.move(20 * time.Minute)
	if err := a.part.writable(); !errors.Is(err, errFenced) {
		t.Fatalf("writable() = %v past the deadline, want errFenced", err)
	}
	close(fp.model.release)
	kittest.Eventually(t, 30*time.Second, "the reply's append to wait for the lease", func() bool {
		return a.st.waiting.Load() > 0
	})
	if a.part.fenced.Err() != nil {
		t.Fatal("the partition was given up: the lease loop ran, the test means to run before it")
	}
	fp.sameLog(t, "f1", before)
	// The lease loop wakes and gives the partition up (its Lost).
	fp.o.stopPartition(a.part.n)
	<-a.part.done_ // every actor and run of the partition has ended
	if !a.st.refused.Load() {
		t.Fatal("the waiting append was not refused when the partition was given up")
	}
	fp.sameLog(t, "f1", before)
	if _, err := fp.o.checkpoints.Get(context.Background(), runKey(a.part.n, a.sid)); err != nil {
		t.Fatalf("the running mark of the cut turn was not left for the next owner: %v", err)
	}
}

// A partition given up (the lease manager's Lost) refuses its sessions'
// appends even with a context that cannot be cancelled, as a rejection or
// an approval answer is written: the store refuses before it sends.
func TestGivenUpPartitionWritesNothing(t *testing.T) {
	fp := newFencePlatform(t)
	a, before := fp.holdTurn(t, "f2")
	fp.o.stopPartition(a.part.n) // what the lease manager's Lost does
	close(fp.model.release)
	<-a.part.done_ // every actor and run of the partition has ended
	_, err := a.st.Append(context.WithoutCancel(context.Background()), events.Entry{Type: events.EntryCommandRejected,
		CommandID: "late", Reason: "late", Code: codeInvalid})
	if !errors.Is(err, errFenced) {
		t.Fatalf("an append after the partition was given up: err %v, want errFenced", err)
	}
	fp.sameLog(t, "f2", before)
}
