package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Each service run alone serves its own series, with the runtime's, on the
// /metrics of its --http address, each family once.
func TestEveryServiceAloneServesItsMetrics(t *testing.T) {
	srv := natstest.RunServer(t)
	if code, out, errOut := cairn(t, "provision", "--nats", srv.ClientURL()); code != 0 {
		t.Fatalf("provision: exit %d\n%s%s", code, out, errOut)
	}
	ctx, cancel := context.WithCancel(context.Background())
	type service struct {
		args   []string
		family string // one of the service's own families
		addr   string
		stderr bytes.Buffer
		code   chan int
	}
	services := map[string]*service{
		"orchestrator": {args: []string{"orchestrator"}, family: "cairn_orchestrator_partitions_held"},
		"toolrunner":   {args: []string{"toolrunner", "--workspace-root", t.TempDir()}, family: "cairn_toolrunner_running_calls"},
		"compactor":    {args: []string{"compactor"}, family: "cairn_compactor_running"},
		"projector":    {args: []string{"projector", "--data", t.TempDir()}, family: "cairn_projector_lag_entries"},
		"gateway":      {args: []string{"gateway"}, family: "cairn_gateway_sse_streams"},
	}
	for _, s := range services {
		s.addr, s.code = freeAddr(t), make(chan int, 1)
		args := append(s.args, "--nats", srv.ClientURL(), "--http", s.addr)
		go func() { s.code <- run(ctx, args, nil, io.Discard, &s.stderr) }()
	}
	defer func() {
		cancel()
		for name, s := range services {
			if c := <-s.code; c != 0 {
				t.Errorf("%s exited %d: %s", name, c, s.stderr.String())
			}
		}
	}()
	for name, s := range services {
		var families []string
		pollUp(t, name+" serving /metrics", func() (bool, string) {
			resp, err := http.Get("http://" + s.addr + "/metrics")
			if err != nil {
				return false, err.Error()
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 {
				return false, fmt.Sprintf("status %d", resp.StatusCode)
			}
			parser := expfmt.NewTextParser(model.UTF8Validation)
			fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
			if err != nil {
				t.Fatalf("%s: /metrics does not parse: %v", name, err)
			}
			families = families[:0]
			for _, m := range typeLine.FindAllStringSubmatch(string(body), -1) {
				families = append(families, m[1])
			}
			_, own := fams[s.family]
			_, runtime := fams["go_goroutines"]
			return own && runtime, fmt.Sprintf("families %v", families)
		})
		slices.Sort(families)
		if d := slices.Compact(slices.Clone(families)); len(d) != len(families) {
			t.Errorf("%s exports a family twice: %v", name, families)
		}
		for _, f := range families {
			if !strings.HasPrefix(f, "cairn_") && !strings.HasPrefix(f, "go_") && !strings.HasPrefix(f, "process_") && !strings.HasPrefix(f, "promhttp_") {
				t.Errorf("%s exports %s: not a cairn_, go_ or process_ family", name, f)
			}
		}
	}
}
