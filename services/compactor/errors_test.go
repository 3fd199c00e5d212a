package compactor_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/compactbus"
	"github.com/cairn-agents/cairn/pkg/compaction"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/services/compactor"
	"github.com/nats-io/nats-server/v2/server"
)

func TestConfigIsValidated(t *testing.T) {
	m, _ := newModels([]byte(windowScript))
	for _, c := range []struct {
		cfg   compactor.Config
		field string
	}{
		{compactor.Config{Models: m, Concurrency: -1}, "concurrency"},
		{compactor.Config{Models: m, AckWait: time.Millisecond}, "ackWait"},
		{compactor.Config{Models: m, Replicas: 9}, "replicas"},
		{compactor.Config{Models: m, MaxDeliveries: -2}, "maxDeliveries"},
	} {
		_, err := compactor.New(c.cfg)
		var fe *events.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%+v: %v, want a field error on %s", c.cfg, err, c.field)
		}
	}
	if _, err := compactor.New(compactor.Config{}); err == nil {
		t.Error("a config without Models was accepted")
	}
}

func TestFailuresComeBackAsRemoteErrors(t *testing.T) {
	p := newPlatform(t)
	m, err := newModels([]byte(`{"rules":[{"match":{"contains":"bad request"},"reply":{"error":{"status":400,"message":"no"}}},{"reply":{"text":"branch tried B"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	client, err := compactbus.New(p.nc, eventsNames)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// No compactor has started and no `cairn provision` created their
	// consumer (newPlatform provisions like production, which does).
	if err := p.js.DeleteConsumer(ctx, eventsNames.CompactionsStream(), eventsNames.CompactorConsumer()); err != nil {
		t.Fatal(err)
	}
	req := compactbus.Request{SessionID: "s1", RequestID: "r0", Model: "scripted/m", Job: compaction.Job{Transcript: "x"}}
	if _, err := client.Summarize(ctx, req); !errors.Is(err, compactbus.ErrNoCompactor) {
		t.Fatalf("before any compactor started: %v", err)
	}
	p.startCompactor(t, m, "c1")
	var re *compactbus.RemoteError
	_, err = client.Summarize(ctx, compactbus.Request{SessionID: "s1", RequestID: "r1", Model: "nowhere/m", Job: compaction.Job{Transcript: "x"}})
	if !errors.As(err, &re) || re.Worker != "c1" {
		t.Fatalf("unknown model: %v", err)
	}
	_, err = client.Summarize(ctx, compactbus.Request{SessionID: "s1", RequestID: "r2", Model: "scripted/m", Job: compaction.Job{Transcript: "a bad request"}})
	if !errors.As(err, &re) {
		t.Fatalf("provider refusal: %v", err)
	}
	// A branch summary goes through the same workers.
	_, model, _ := m.Resolve("scripted/m")
	branch := []events.Entry{{ID: "b1", Type: events.EntryMessage, Message: &events.Message{Role: events.RoleUser, Content: events.TextContent("try B")}}}
	s, err := client.SummarizeBranch(ctx, events.DefaultRef("s1"), branch, model, compaction.SettingsFor(0), "")
	if err != nil || s != "branch tried B" {
		t.Fatalf("branch summary %q, %v", s, err)
	}
	// Asked again (an owner that restarted), the stored result answers.
	s, err = client.SummarizeBranch(ctx, events.DefaultRef("s1"), branch, model, compaction.SettingsFor(0), "")
	if err != nil || s != "branch tried B" {
		t.Fatalf("branch summary asked again: %q, %v", s, err)
	}
	if _, err := client.Compact(ctx, events.DefaultRef("s1"), branch, model, compaction.SettingsFor(0), "manual", ""); !errors.Is(err, compaction.ErrNothingToCompact) {
		t.Fatalf("compacting a tiny path: %v", err)
	}
}

func TestATranscriptOverTheMaxPayloadLosesItsOldestPart(t *testing.T) {
	p := newPlatform(t, func(o *server.Options) { o.MaxPayload = 64 * 1024 })
	m, err := newModels([]byte(`{"rules":[{"match":{"contains":"left out]"},"reply":{"text":"trimmed"}},{"reply":{"text":"whole"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p.startCompactor(t, m, "c1")
	client, err := compactbus.New(p.nc, eventsNames)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	big := strings.Repeat("é", 100*1024)
	r, err := client.Summarize(ctx, compactbus.Request{SessionID: "s1", RequestID: "big", Model: "scripted/m", Job: compaction.Job{Transcript: big}})
	if err != nil || r.Summary.Text != "trimmed" {
		t.Fatalf("summary %q, %v", r.Summary.Text, err)
	}
}
