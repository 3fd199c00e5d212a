package compaction_test

import (
	"fmt"
	"testing"

	"github.com/cairn-agents/cairn/pkg/compaction"
	"github.com/cairn-agents/cairn/pkg/events"
)

// BenchmarkPrepare10k prepares the compaction of a 10,000-entry session
// (2,500 turns of user, tool call, tool result, reply) with a previous
// compaction halfway.
func BenchmarkPrepare10k(b *testing.B) {
	var bl builder
	for i := 0; i < 2500; i++ {
		bl.user(chars("question", 400))
		id := fmt.Sprintf("c%d", i)
		bl.call(id, "read", fmt.Sprintf(`{"path":"f%d.go"}`, i%50))
		bl.result(id, "read", chars("contents", 1200))
		bl.reply(chars("answer", 600), &events.Usage{Input: int64(1000 * i), Output: 150})
		if i == 1250 {
			bl.add(events.Entry{Type: events.EntryCompaction, Summary: "earlier", FirstKeptEntryID: bl.path[len(bl.path)-40].ID})
		}
	}
	s := compaction.SettingsFor(200000)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		p, err := compaction.Prepare(bl.path, s)
		if err != nil || p.FirstKeptEntryID == "" {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(bl.path)), "entries")
}
