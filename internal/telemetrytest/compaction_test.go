package telemetrytest

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/compactbus"
	"github.com/cairn-agents/cairn/pkg/compaction"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provider/scripted"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/telemetry"
	"github.com/cairn-agents/cairn/services/compactor"
	"github.com/nats-io/nats.go"
)

// TestCompactionTraceCrossesNATS: a summary asked through compactbus from
// inside a span is continued by the compactor (its own NATS connection) in
// cairn.compaction.summarize under that span, without the transcript or the
// summary in its attributes.
func TestCompactionTraceCrossesNATS(t *testing.T) {
	recv := newReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.srv.URL)
	ctx := context.Background()
	shutdown, err := telemetry.Setup(ctx, telemetry.Config{ServiceName: "test"})
	if err != nil {
		t.Fatal(err)
	}
	srv, _, _ := natstest.RunProvisioned(t, events.Names{}, provision.Options{})
	_, stop := startCompactor(t, srv.ClientURL(), "")
	defer stop()

	nc := natstest.Connect(t, srv.Server)
	pctx, parent := telemetry.Tracer().Start(ctx, telemetry.SpanCompact)
	summarize(t, pctx, nc)
	parent.End()
	stop() // its spans are in this process's provider, flushed next
	if err := shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, s := range recv.spans() {
		if s.Name != "cairn.compaction.summarize" {
			continue
		}
		found = true
		if s.Trace != parent.SpanContext().TraceID().String() || s.Parent != parent.SpanContext().SpanID().String() {
			t.Errorf("summarize span %s/%s under %s, want under %s", s.Trace, s.ID, s.Parent, parent.SpanContext().SpanID())
		}
		if s.Attrs["cairn.compaction.reason"] != "manual" || s.Attrs[telemetry.AttrStatus] != telemetry.StatusOK || s.Attrs[telemetry.AttrWorker] != "w1" {
			t.Errorf("summarize attributes %v", s.Attrs)
		}
		for _, v := range s.Attrs {
			if strings.Contains(v, "SECRET-TRANSCRIPT") || strings.Contains(v, "THE-SUMMARY") {
				t.Errorf("content in a summarize span attribute: %q", v)
			}
		}
	}
	if !found {
		t.Fatalf("no cairn.compaction.summarize span among %s", dump(recv.spans()))
	}
}

// startCompactor runs a compactor whose model answers every summary call
// with THE-SUMMARY, until stop; httpAddr "" serves no /metrics.
func startCompactor(t *testing.T, natsURL, httpAddr string) (c *compactor.Compactor, stop func()) {
	t.Helper()
	sc, err := scripted.Parse([]byte(`{"rules": [{"reply": {"text": "THE-SUMMARY"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	c, err = compactor.New(compactor.Config{NATSURL: natsURL, Models: scriptedOnly{scripted.New(sc)}, Name: "w1", HTTPAddr: httpAddr,
		Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	stop = kittest.Run(t, context.Background(), "compactor", c.Run)
	waitFor(t, "compactor ready", c.Ready)
	return c, stop
}

// summarize asks for one summary through compactbus.
func summarize(t *testing.T, ctx context.Context, nc *nats.Conn) compactbus.Result {
	t.Helper()
	client, err := compactbus.New(nc, events.Names{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := client.Summarize(ctx, compactbus.Request{V: compactbus.Version, Kind: compactbus.KindCompaction, SessionID: "s1",
		RequestID: "r1", Model: "scripted/sum", Reason: "manual", Job: compaction.Job{Transcript: "[User]: SECRET-TRANSCRIPT"}})
	if err != nil || res.Summary.Text != "THE-SUMMARY" {
		t.Fatalf("summary %+v, %v", res, err)
	}
	return res
}
