package toolrunner_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/toolbus"
	"github.com/nats-io/nats.go/jetstream"
)

// cluster is an embedded NATS server, provisioned, with a bus for the test
// (the orchestrator's side) and directories for runners.
type cluster struct {
	url     string
	bus     *toolbus.Bus
	js      jetstream.JetStream
	root    string
	records string

	mu      sync.Mutex
	results map[string][]toolbus.Result
	count   int
	changed chan struct{}
}

func newCluster(t testing.TB) *cluster {
	t.Helper()
	srv, nc, js := natstest.RunProvisioned(t, events.Names{}, provision.Options{Pools: []string{"test"}})
	bus, err := toolbus.New(nc, events.Names{})
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{url: srv.ClientURL(), bus: bus, js: js, root: t.TempDir(), records: t.TempDir(),
		results: map[string][]toolbus.Result{}, changed: make(chan struct{}, 1)}
	stop, err := bus.ConsumeResults(context.Background(), events.SessionRef{}, func(r toolbus.Result) {
		if r.Err != nil {
			t.Errorf("invalid result at seq %d: %v", r.Seq, r.Err)
			return
		}
		c.mu.Lock()
		c.results[r.ToolCallID] = append(c.results[r.ToolCallID], r)
		c.count++
		c.mu.Unlock()
		select {
		case c.changed <- struct{}{}:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return c
}

func (c *cluster) runner(t testing.TB, name string, o procOpts) *proc {
	t.Helper()
	return startRunner(t, c.url, c.root, c.records, name, o)
}

func (c *cluster) dispatch(t testing.TB, sid, id, name, args string) {
	t.Helper()
	err := c.bus.Dispatch(context.Background(), "test", events.ToolCall{SessionID: sid, ToolCallID: id, Name: name,
		Arguments: []byte(args)})
	if err != nil {
		t.Fatal(err)
	}
}

// waitResults waits until n results arrived and returns them by call id.
func (c *cluster) waitResults(t testing.TB, n int) map[string][]toolbus.Result {
	t.Helper()
	deadline := time.After(120 * time.Second)
	for {
		c.mu.Lock()
		count := c.count
		c.mu.Unlock()
		if count >= n {
			break
		}
		select {
		case <-c.changed:
		case <-deadline:
			t.Fatalf("waited 120s for %d results, have %d", n, count)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string][]toolbus.Result{}
	for k, v := range c.results {
		out[k] = append([]toolbus.Result(nil), v...)
	}
	return out
}

// waitDrained waits until the pool's queue is empty and nothing is unacked,
// then checks CAIRN_RESULTS holds exactly want results.
func (c *cluster) waitDrained(t testing.TB, want uint64) {
	t.Helper()
	ctx := context.Background()
	kittest.Eventually(t, 60*time.Second, "queue drained", func() error {
		cons, err := c.js.Consumer(ctx, "CAIRN_TOOLS", events.Names{}.ToolPoolConsumer("test"))
		if err != nil {
			t.Fatal(err)
		}
		info, err := cons.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.NumPending == 0 && info.NumAckPending == 0 {
			return nil
		}
		return fmt.Errorf("pending %d, unacked %d", info.NumPending, info.NumAckPending)
	})
	s, err := c.js.Stream(ctx, "CAIRN_RESULTS")
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != want {
		t.Errorf("CAIRN_RESULTS holds %d results, want %d", info.State.Msgs, want)
	}
}

func TestFourRunnersShareAThousandCalls(t *testing.T) {
	c := newCluster(t)
	names := []string{"r1", "r2", "r3", "r4"}
	for _, n := range names {
		c.runner(t, n, procOpts{concurrency: 4})
	}
	const calls = 1000
	for i := range calls {
		c.dispatch(t, fmt.Sprintf("s%d", i%20), fmt.Sprintf("call-%04d", i), "record", `{}`)
	}
	got := c.waitResults(t, calls)
	perWorker := map[string]int{}
	for i := range calls {
		id := fmt.Sprintf("call-%04d", i)
		rs := got[id]
		if len(rs) != 1 {
			t.Fatalf("call %s has %d results, want 1", id, len(rs))
		}
		if rs[0].IsError {
			t.Fatalf("call %s failed: %s", id, rs[0].Content[0].Text)
		}
		runs := readLines(t, filepath.Join(c.records, "run-"+id))
		if len(runs) != 1 || runs[0] != rs[0].Worker {
			t.Fatalf("call %s ran on %v; want once, on %s (the worker of its result)", id, runs, rs[0].Worker)
		}
		perWorker[rs[0].Worker]++
	}
	t.Logf("calls per runner: %v", perWorker)
	for _, n := range names {
		if perWorker[n] < calls/20 {
			t.Errorf("runner %s ran %d of %d calls; want at least %d (load spread over all four)", n, perWorker[n], calls, calls/20)
		}
	}
	c.waitDrained(t, calls)
}

func TestKilledRunnersCallsAreRerunOrReportedInterrupted(t *testing.T) {
	c := newCluster(t)
	a := c.runner(t, "A", procOpts{ackWaitMs: 1000})
	c.dispatch(t, "s1", "idem", "hangidem", `{"hangOn":"A"}`)
	c.dispatch(t, "s1", "once", "hang", `{"hangOn":"A"}`)
	kittest.Eventually(t, 60*time.Second, "both calls started on A", func() bool {
		return len(readLines(t, filepath.Join(c.records, "run-idem"))) > 0 && len(readLines(t, filepath.Join(c.records, "run-once"))) > 0
	})
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-a.exited
	c.runner(t, "B", procOpts{ackWaitMs: 1000})

	got := c.waitResults(t, 2)
	if rs := got["idem"]; len(rs) != 1 || rs[0].IsError || rs[0].Worker != "B" || rs[0].Content[0].Text != "done by B" {
		t.Errorf("idempotent call: results %+v, want one success from B", rs)
	}
	if rs := got["once"]; len(rs) != 1 || !rs[0].IsError || !rs[0].Interrupted || rs[0].Worker != "B" {
		t.Errorf("non-idempotent call: results %+v, want one interrupted error from B", rs)
	}
	if runs := readLines(t, filepath.Join(c.records, "run-idem")); fmt.Sprint(runs) != "[A B]" {
		t.Errorf("idempotent call ran on %v, want [A B]", runs)
	}
	if runs := readLines(t, filepath.Join(c.records, "run-once")); fmt.Sprint(runs) != "[A]" {
		t.Errorf("non-idempotent call ran on %v, want [A] only", runs)
	}
	c.waitDrained(t, 2)
}

func TestSIGTERMHandsBackUnfinishedCallsAndExitsCleanly(t *testing.T) {
	c := newCluster(t)
	a := c.runner(t, "A", procOpts{shutdownMs: 200, http: true})
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/metrics": 200} {
		resp, err := http.Get("http://" + a.httpAddr + path)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s = %d, want %d", path, resp.StatusCode, want)
		}
	}
	c.dispatch(t, "s1", "idem", "hangidem", `{"hangOn":"A"}`)
	kittest.Eventually(t, 60*time.Second, "the call started on A", func() bool {
		return len(readLines(t, filepath.Join(c.records, "run-idem"))) > 0
	})
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.exited:
	case <-time.After(60 * time.Second):
		t.Fatal("runner A did not exit after SIGTERM")
	}
	if a.err != nil {
		t.Errorf("runner A exited with %v, want status 0", a.err)
	}
	c.runner(t, "B", procOpts{})
	got := c.waitResults(t, 1)
	if rs := got["idem"]; len(rs) != 1 || rs[0].IsError || rs[0].Worker != "B" {
		t.Errorf("handed-back call: results %+v, want one success from B", rs)
	}
	c.waitDrained(t, 1)
}
