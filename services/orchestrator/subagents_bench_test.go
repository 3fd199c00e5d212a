package orchestrator

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/nats-io/nats.go"
)

// BenchmarkTaskRoundTrip measures a parent's run with one task call, from
// publishing its prompt to its final reply's message_end: the parent's first model call,
// the park, the child's create, prompt and run, its report, the read of
// its log, the resume and the parent's second model call (the scripted
// model answers at once). A new parent per iteration. Reports p50 and p99.
func BenchmarkTaskRoundTrip(b *testing.B) {
	p := newPlatform(b)
	p.startApprovals("o1", subagentScript())
	var lat []time.Duration
	for i := range b.N {
		sid := "bp" + strconv.Itoa(i)
		p.send(events.Command{ID: "c" + sid, Type: events.CmdCreate, SessionID: sid, Tools: []string{"task"}})
		end := make(chan struct{}, 1)
		sub, err := p.nc.Subscribe(p.n.EventSubject(events.DefaultRef(sid)), func(m *nats.Msg) {
			ev, err := events.DecodeEvent(m.Data)
			if err != nil || ev.Type != events.EvMessageEnd || ev.Message == nil {
				return
			}
			// The reply after the task's result (the parked run's end is not the end).
			if ev.Message.Role == events.RoleAssistant && ev.Message.Content.Text() == "finished" {
				select {
				case end <- struct{}{}:
				default:
				}
			}
		})
		if err != nil {
			b.Fatal(err)
		}
		p.waitLog(sid, "created", named("c"+sid))
		start := time.Now()
		p.send(events.Command{ID: "p" + sid, Type: events.CmdPrompt, SessionID: sid, Text: "one task"})
		deadline := time.NewTimer(30 * time.Second)
		select {
		case <-end:
			lat = append(lat, time.Since(start))
		case <-deadline.C:
			b.Fatalf("no final reply of %s within 30s", sid)
		}
		deadline.Stop()
		_ = sub.Unsubscribe()
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
