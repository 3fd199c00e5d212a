package orchestrator

import (
	"context"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provider/scripted"
	"github.com/nats-io/nats.go"
)

const benchApprovalScript = `{
  "rules": [
    {"match": {"lastRole": "user"},
     "reply": {"toolCalls": [{"id": "t1", "name": "ls", "arguments": {"path": "."}}]}},
    {"match": {"lastRole": "toolResult"}, "reply": {"text": "done"}}
  ]
}`

// BenchmarkApproveToToolStart measures the time from publishing an approve
// command to the approved call's tool_execution_start event: the intake,
// the answer's append, the resume, reading the batch back from the log.
// One session, one parked call per prompt. Reports p50 and p99.
func BenchmarkApproveToToolStart(b *testing.B) {
	p := newPlatform(b)
	p.startApprovals("o1", benchApprovalScript)
	ask := &events.Approvals{Tools: map[string]string{"ls": events.PolicyAsk}}
	p.send(events.Command{ID: "c0", Type: events.CmdCreate, SessionID: "bn", Tools: []string{"ls"}, Approvals: ask})
	evs := make(chan events.Event, 256)
	sub, err := p.nc.Subscribe(p.n.EventSubject(events.DefaultRef("bn")), func(m *nats.Msg) {
		if ev, err := events.DecodeEvent(m.Data); err == nil {
			evs <- ev
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	wait := func(what string, f func(events.Event) bool) time.Time {
		b.Helper()
		deadline := time.NewTimer(30 * time.Second)
		defer deadline.Stop()
		for {
			select {
			case ev := <-evs:
				if f(ev) {
					return time.Now()
				}
			case <-deadline.C:
				b.Fatalf("no %s within 30s", what)
			}
		}
	}
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		p.send(events.Command{ID: "p" + strconv.Itoa(i), Type: events.CmdPrompt, SessionID: "bn", Text: "go"})
		wait("approval request", func(ev events.Event) bool { return ev.Type == events.EvApprovalRequested })
		b.StartTimer()
		start := time.Now()
		p.send(events.Command{ID: "a" + strconv.Itoa(i), Type: events.CmdApprove, SessionID: "bn", ToolCallID: "t1"})
		at := wait("tool start", func(ev events.Event) bool { return ev.Type == events.EvToolExecutionStart && ev.ToolCallID == "t1" })
		lat = append(lat, at.Sub(start))
		b.StopTimer()
		wait("agent_end", func(ev events.Event) bool { return ev.Type == events.EvAgentEnd })
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkWaitingMemory compares what 200 waiting sessions cost the
// process with what 200 idle ones cost: heap in use after a GC plus
// goroutine stacks, per session, once every actor has shrunk (the NATS
// server runs in this process and is counted too). Each state has its own
// platform, so neither sees the other's leftovers.
func BenchmarkWaitingMemory(b *testing.B) {
	const n = 200
	measure := func(b *testing.B, waiting bool) float64 {
		p := newPlatform(b)
		sc, err := scripted.Parse([]byte(benchApprovalScript))
		if err != nil {
			b.Fatal(err)
		}
		o, err := New(Config{Conn: p.nc, Log: p.log, Instance: "o1", Partitions: 4, LeaseTTL: time.Second, ShrinkAfter: 20 * time.Millisecond,
			Models: scriptedModels{scripted.New(sc)}, DefaultModel: "scripted/test", Logger: failOnRefusedMove(b)})
		if err != nil {
			b.Fatal(err)
		}
		kittest.Run(b, context.Background(), "orchestrator", o.Run)
		var pol *events.Approvals
		if waiting {
			pol = &events.Approvals{Tools: map[string]string{"ls": events.PolicyAsk}}
		}
		// Warm up with one session, so the baseline holds the fixed costs.
		p.send(events.Command{ID: "w0", Type: events.CmdCreate, SessionID: "warm", Tools: []string{"ls"}})
		p.waitLog("warm", "created", named("w0"))
		before := heapAndStacks()
		for i := range n {
			sid := "m" + strconv.Itoa(i)
			p.send(events.Command{ID: "c" + sid, Type: events.CmdCreate, SessionID: sid, Tools: []string{"ls"}, Approvals: pol})
			p.send(events.Command{ID: "p" + sid, Type: events.CmdPrompt, SessionID: sid, Text: "go"})
		}
		for i := range n {
			sid := "m" + strconv.Itoa(i)
			p.waitLog(sid, "settled or waiting", func(es []events.Entry) bool {
				if waiting {
					return countType(es, events.EntryApprovalRequested) == 1
				}
				return lastText(es) == "done"
			})
		}
		kittest.Eventually(b, 60*time.Second, "every session shrunk", func() error {
			if _, shrunk := o.Resident(); shrunk < n {
				return errString("shrunk " + strconv.Itoa(shrunk))
			}
			return nil
		})
		return float64(heapAndStacks()-before) / n
	}
	for range b.N {
		idle := measure(b, false)
		wait := measure(b, true)
		b.ReportMetric(idle, "idle-B/session")
		b.ReportMetric(wait, "waiting-B/session")
	}
}

func heapAndStacks() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse + m.StackInuse)
}
