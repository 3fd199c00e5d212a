package mcptool

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/tool"
)

// BenchmarkMCPCall measures one call's round trip through the SDK to the
// test server's echo tool, reporting p50 and p99 besides the mean.
func BenchmarkMCPCall(b *testing.B) {
	for _, kind := range []string{"stdio", "http"} {
		b.Run(kind, func(b *testing.B) {
			srv := stdioServer("bench")
			if kind == "http" {
				srv = Server{Name: "bench", URL: httpServer(b, "")}
			}
			s, _ := start(b, srv)
			echo := find(b, s, "mcp__bench__echo")
			args := json.RawMessage(`{"text":"ping"}`)
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				r, err := echo.Execute(context.Background(), tool.Call{ID: "b", Name: "mcp__bench__echo", Arguments: args}, nil)
				lat = append(lat, time.Since(t0))
				if err != nil || r.IsError {
					b.Fatalf("%+v %v", r, err)
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}
