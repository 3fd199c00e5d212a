package compactor_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/agent/agenttest"
	"github.com/cairn-agents/cairn/pkg/agent/harness"
	"github.com/cairn-agents/cairn/pkg/compactbus"
	"github.com/cairn-agents/cairn/pkg/compaction"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
)

// A small window (4000 tokens) and usage estimated from the context, as
// the scripted provider does: every reply says how big its context was.
const windowScript = `{"defaults":{"contextWindow":4000,"maxOutput":1000,"usage":"estimate"},"rules":[
 {"match":{"contains":"<conversation>"},"reply":{"text":"## Goal\nAnswer every question.\n## Progress\n### Done\n- earlier questions answered\n## Next steps\n1. answer the next question"}},
 {"reply":{"text":"noted; ready for the next one. ` + "................................................................................................................................................................................................................................................................................................................................................................................................" + `"}}]}`

// compactorFor is the harness Compactor of a session over the compaction
// workers, as the orchestrator wires it.
func compactorFor(c *compactbus.Client, sid string) harness.Compactor {
	return func(ctx context.Context, req harness.CompactRequest) (harness.Compaction, error) {
		s := compaction.SettingsFor(req.Model.ContextWindow)
		r, err := c.Compact(ctx, events.DefaultRef(sid), req.Path, req.Model, s, req.Reason, req.Instructions)
		if err != nil {
			return harness.Compaction{}, err
		}
		return harness.Compaction{Summary: r.Summary, FirstKeptEntryID: r.FirstKeptEntryID, TokensBefore: r.TokensBefore, Details: r.Details}, nil
	}
}

func TestSessionTenTimesTheWindowStaysInside(t *testing.T) {
	p := newPlatform(t)
	m, err := newModels([]byte(windowScript))
	if err != nil {
		t.Fatal(err)
	}
	p.startCompactor(t, m, "c1")
	p.startCompactor(t, m, "c2")
	client, err := compactbus.New(p.nc, eventsNames)
	if err != nil {
		t.Fatal(err)
	}
	_, model, _ := m.Resolve("scripted/small")
	const sid = "window-session"
	sess := agenttest.NewSession()
	var ends []events.Event
	h, err := harness.New(context.Background(), harness.Config{
		SessionID: sid, Session: sess, Providers: map[string]llm.Provider{"scripted": m.p}, Model: model,
		Compactor: compactorFor(client, sid), ReserveTokens: compaction.SettingsFor(model.ContextWindow).ReserveTokens,
		Sink: func(ev events.Event) {
			if ev.Type == events.EvCompactionEnd {
				ends = append(ends, ev)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var history int64
	for i := 0; i < 80; i++ {
		text := "question " + strings.Repeat("x", 1900)
		msg := events.Message{Role: events.RoleUser, Content: events.TextContent(text)}
		history += compaction.EstimateMessage(&msg)
		if err := h.Prompt(ctx, msg); err != nil {
			t.Fatalf("prompt %d: %v", i, err)
		}
	}
	compactions, replies := 0, 0
	for _, e := range sess.Entries() {
		switch {
		case e.Type == events.EntryCompaction:
			compactions++
		case e.Type == events.EntryMessage && e.Message.Role == events.RoleAssistant:
			replies++
			m := e.Message
			history += compaction.EstimateMessage(m)
			if m.StopReason != events.StopEnd || m.Usage == nil {
				t.Fatalf("reply %d: stop %s, error %q", replies, m.StopReason, m.ErrorMessage)
			}
			if used := compaction.ContextTokens(m.Usage); used > model.ContextWindow {
				t.Fatalf("reply %d used %d tokens, over the %d-token window", replies, used, model.ContextWindow)
			}
		}
	}
	if history < 10*model.ContextWindow {
		t.Fatalf("history is %d tokens, not 10× the %d-token window", history, model.ContextWindow)
	}
	if replies != 80 || compactions < 10 || len(ends) != compactions {
		t.Fatalf("replies %d, compactions %d, compaction_end events %d", replies, compactions, len(ends))
	}
	for _, ev := range ends {
		if ev.Compaction.Reason != "threshold" || ev.Compaction.Error != "" {
			t.Fatalf("compaction_end %+v", ev.Compaction)
		}
	}
	t.Logf("history %d tokens = %.1f× the window; %d compactions", history, float64(history)/float64(model.ContextWindow), compactions)
}

func TestOverflowCompactsThroughTheWorkersThenRetries(t *testing.T) {
	p := newPlatform(t)
	m, err := newModels([]byte(`{"defaults":{"contextWindow":4000,"usage":"estimate"},"rules":[
	 {"match":{"contains":"<conversation>"},"reply":{"text":"## Goal\nsummarised"}},
	 {"match":{"contains":"overflow me"},"times":1,"reply":{"error":{"status":400,"message":"prompt is too long: 5000 tokens > 4000 maximum"}}},
	 {"reply":{"text":"ok"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p.startCompactor(t, m, "c1")
	client, err := compactbus.New(p.nc, eventsNames)
	if err != nil {
		t.Fatal(err)
	}
	_, model, _ := m.Resolve("scripted/small")
	const sid = "overflow-session"
	sess := agenttest.NewSession()
	var reasons []string
	h, err := harness.New(context.Background(), harness.Config{SessionID: sid, Session: sess,
		Providers: map[string]llm.Provider{"scripted": m.p}, Model: model, Compactor: compactorFor(client, sid), ReserveTokens: -1,
		Sink: func(ev events.Event) {
			if ev.Type == events.EvCompactionEnd && ev.Compaction.Error == "" {
				reasons = append(reasons, ev.Compaction.Reason)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, text := range []string{strings.Repeat("a", 3000), strings.Repeat("b", 3000), strings.Repeat("c", 3000), "overflow me"} {
		if err := h.Prompt(ctx, events.Message{Role: events.RoleUser, Content: events.TextContent(text)}); err != nil {
			t.Fatalf("prompt: %v", err)
		}
	}
	msgs := h.Messages()
	if len(reasons) != 1 || reasons[0] != "overflow" || msgs[0].Role != events.RoleCompactionSummary ||
		!strings.HasPrefix(msgs[0].Summary, "## Goal\nsummarised") || msgs[len(msgs)-1].Content.Text() != "ok" {
		t.Fatalf("compactions %v; context %+v", reasons, msgs)
	}
}
