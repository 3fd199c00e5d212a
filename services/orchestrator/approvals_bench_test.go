package orchestrator

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
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
