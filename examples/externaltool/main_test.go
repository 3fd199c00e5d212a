package main

import (
	"context"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
	"github.com/cairn-agents/cairn/pkg/toolbus"
)

// The example's tool, served exactly as main serves it, answers a call.
func TestForecastServedOnTheBus(t *testing.T) {
	srv := natstest.RunServer(t)
	nc, js := natstest.JetStream(t, srv.Server)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := toolbus.Provision(ctx, js, events.Names{}, toolbus.ProvisionOptions{}); err != nil {
		t.Fatal(err)
	}
	bus, err := toolbus.New(nc, events.Names{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := bus.Start(ctx, toolbus.Worker{Pool: "weather", Tools: []tool.Tool{forecast{}}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = s.Wait() }()
	results := make(chan toolbus.Result, 1)
	stop, err := bus.ConsumeResults(ctx, events.DefaultRef("s1"), func(r toolbus.Result) { results <- r })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := bus.Dispatch(ctx, "weather", events.ToolCall{SessionID: "s1", ToolCallID: "c1", Name: "forecast",
		Arguments: []byte(`{"city":"Oslo"}`)}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-results:
		if r.Err != nil || r.IsError || r.Content[0].Text != "Oslo tomorrow: mild, light wind, no rain." {
			t.Fatalf("result = %+v, %v", r.ToolResult, r.Err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no result within 20s")
	}
}
