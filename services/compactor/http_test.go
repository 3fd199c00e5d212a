package compactor_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/compactbus"
	"github.com/cairn-agents/cairn/pkg/compaction"
	"github.com/cairn-agents/cairn/services/compactor"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestHealthAndMetrics(t *testing.T) {
	p := newPlatform(t)
	m, err := newModels([]byte(`{"rules":[{"reply":{"text":"s","usage":{"input":70,"output":7}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	c, err := compactor.New(compactor.Config{NATSURL: p.url, Models: m, Name: "h1", HTTPAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer kittest.Run(t, context.Background(), "compactor", c.Run)()
	waitFor(t, "ready", c.Ready)
	base := "http://" + c.HTTPAddr()
	if code, _ := get(t, base+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz = %d", code)
	}
	client, err := compactbus.New(p.nc, eventsNames)
	if err != nil {
		t.Fatal(err)
	}
	sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer scancel()
	if _, err := client.Summarize(sctx, compactbus.Request{SessionID: "s1", RequestID: "m1", Model: "scripted/m", Job: compaction.Job{Transcript: "x"}}); err != nil {
		t.Fatal(err)
	}
	// The counter moves after the result is stored; poll for it.
	waitFor(t, "the summary in the metrics", func() bool {
		_, body := get(t, base+"/metrics")
		return strings.Contains(body, `cairn_compactor_summaries_total{outcome="ok"} 1`) &&
			strings.Contains(body, `cairn_compactor_tokens_total{direction="input"} 70`)
	})
}
