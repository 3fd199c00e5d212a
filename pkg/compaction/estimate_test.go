package compaction_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/compaction"
	"github.com/cairn-agents/cairn/pkg/events"
)

func TestEstimateGolden(t *testing.T) {
	user := func(n int) events.Message {
		return events.Message{Role: events.RoleUser, Content: events.TextContent(chars("u", n))}
	}
	reply := func(stop events.StopReason, u *events.Usage) events.Message {
		return events.Message{Role: events.RoleAssistant, Content: events.TextContent("answer"), StopReason: stop, Usage: u}
	}
	image := events.Message{Role: events.RoleUser, Content: events.Content{Blocks: []events.Block{
		events.TextBlock("look"), {Type: events.BlockImage, Data: strings.Repeat("A", 100000), MimeType: "image/png"}}}}
	cases := []struct {
		name string
		msgs []events.Message
	}{
		{"no usage: every message estimated (chars/4, rounded up)", []events.Message{user(400), user(401)}},
		{"last valid usage plus the messages after it", []events.Message{user(400), reply(events.StopEnd, &events.Usage{Input: 1000, Output: 50}), user(400)}},
		{"totalTokens wins over the parts", []events.Message{reply(events.StopEnd, &events.Usage{Input: 1, Output: 1, TotalTokens: 5000}), user(40)}},
		{"cache reads and writes count", []events.Message{reply(events.StopEnd, &events.Usage{Input: 10, Output: 20, CacheRead: 300, CacheWrite: 4000})}},
		{"an error reply's usage does not count", []events.Message{reply(events.StopEnd, &events.Usage{Input: 1000}), user(40), reply(events.StopError, &events.Usage{Input: 9000})}},
		{"an aborted reply's usage does not count", []events.Message{reply(events.StopEnd, &events.Usage{Input: 1000}), reply(events.StopAborted, &events.Usage{Input: 9000})}},
		{"an all-zero usage does not count", []events.Message{reply(events.StopEnd, &events.Usage{Input: 1000}), reply(events.StopEnd, &events.Usage{})}},
		{"an image counts a fixed amount, not its bytes", []events.Message{image}},
		{"tool calls count name and arguments", []events.Message{{Role: events.RoleAssistant, Content: events.Content{Blocks: []events.Block{
			{Type: events.BlockToolCall, ID: "c1", Name: "read", Arguments: []byte(`{"path":"main.go"}`)}}}}}},
	}
	var sb strings.Builder
	for _, c := range cases {
		e := compaction.EstimateContext(c.msgs)
		fmt.Fprintf(&sb, "%s\n  tokens=%d usage=%d trailing=%d lastUsageIndex=%d\n", c.name, e.Tokens, e.UsageTokens, e.TrailingTokens, e.LastUsageIndex)
	}
	golden(t, "estimate", sb.String())
}

func TestTriggerGolden(t *testing.T) {
	var sb strings.Builder
	for _, c := range []struct{ tokens, window, reserve int64 }{
		{183616, 200000, 16384}, // exactly window − reserve: not yet
		{183617, 200000, 16384}, // one more: compact
		{1000, 200000, 16384},
		{7000, 8000, 1000},
		{7001, 8000, 1000},
		{500000, 0, 16384}, // unknown window: never
	} {
		s := compaction.Settings{ReserveTokens: c.reserve, KeepRecentTokens: 1}
		fmt.Fprintf(&sb, "tokens=%d window=%d reserve=%d → compact=%v\n", c.tokens, c.window, c.reserve, compaction.ShouldCompact(c.tokens, c.window, s))
	}
	for _, w := range []int64{0, 1000000, 200000, 65536, 8000, 2} {
		s := compaction.SettingsFor(w)
		fmt.Fprintf(&sb, "SettingsFor(%d) = reserve %d, keepRecent %d, maxSummary %d (model max 4000)\n", w, s.ReserveTokens, s.KeepRecentTokens, s.MaxSummaryTokens(4000))
	}
	golden(t, "trigger", sb.String())
}

func TestSettingsAreValidated(t *testing.T) {
	for _, s := range []compaction.Settings{{ReserveTokens: 0, KeepRecentTokens: 1}, {ReserveTokens: 1, KeepRecentTokens: -5}} {
		_, err := compaction.Prepare(nil, s)
		var fe *compaction.FieldError
		if !errorsAs(err, &fe) || fe.Field == "" {
			t.Fatalf("Prepare with %+v: %v, want a FieldError", s, err)
		}
	}
}
