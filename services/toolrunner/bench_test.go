package toolrunner_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
)

// waitCount waits until the cluster has seen n results in all.
func (c *cluster) waitCount(b *testing.B, n int) {
	b.Helper()
	deadline := time.After(120 * time.Second)
	for {
		c.mu.Lock()
		count := c.count
		c.mu.Unlock()
		if count >= n {
			return
		}
		select {
		case <-c.changed:
		case <-deadline:
			b.Fatalf("waited 120s for %d results, have %d", n, count)
		}
	}
}

// BenchmarkRoundTrip measures dispatch → stored result → received, one call
// at a time, for a no-op tool run by a toolrunner in another process.
func BenchmarkRoundTrip(b *testing.B) {
	roundTrip(b, procOpts{concurrency: 1}, "noop", `{}`)
}

// BenchmarkRoundTripBash is BenchmarkRoundTrip for the built-in bash
// running `true`, unconfined (off) and through the sandbox (required), in
// one run series: the difference between the two is what confinement adds
// to a call, the difference to BenchmarkRoundTrip is bash's start.
func BenchmarkRoundTripBash(b *testing.B) {
	for _, level := range []string{"off", "required"} {
		b.Run(level, func(b *testing.B) {
			roundTrip(b, procOpts{concurrency: 1, builtin: true, sandbox: level}, "bash", `{"command":"true"}`)
		})
	}
}

func roundTrip(b *testing.B, o procOpts, name, args string) {
	c := newCluster(b)
	c.runner(b, "r1", o)
	for i := range 50 { // warm up the connections and the consumer
		c.dispatch(b, "warm", fmt.Sprintf("w%d", i), name, args)
	}
	c.waitCount(b, 50)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		c.dispatch(b, "bench", fmt.Sprintf("c%d", i), name, args)
		c.waitCount(b, 50+i+1)
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	c.mu.Lock()
	for id, rs := range c.results {
		if len(rs) == 0 || rs[0].IsError {
			b.Errorf("call %s failed: %+v", id, rs)
			break
		}
	}
	c.mu.Unlock()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkRequestReplyFloor measures core NATS request/reply to another
// process through the same server: the floor of BenchmarkRoundTrip.
func BenchmarkRequestReplyFloor(b *testing.B) {
	c := newCluster(b)
	c.runner(b, "responder", procOpts{responder: true})
	nc := c.bus.JetStream().Conn()
	payload := []byte(`{"v":1,"sessionId":"bench","toolCallId":"c1","name":"noop","arguments":{}}`)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if _, err := nc.Request("bench.echo", payload, 5*time.Second); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkThroughput measures no-op calls per second through 1, 2 and 4
// toolrunner processes (concurrency 4 each), dispatched by 16 goroutines.
func BenchmarkThroughput(b *testing.B) {
	for _, runners := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("runners=%d", runners), func(b *testing.B) {
			c := newCluster(b)
			for r := range runners {
				c.runner(b, fmt.Sprintf("r%d", r+1), procOpts{concurrency: 4})
			}
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			const dispatchers = 16
			for d := range dispatchers {
				wg.Go(func() {
					for i := d; i < b.N; i += dispatchers {
						err := c.bus.Dispatch(context.Background(), "test", events.ToolCall{SessionID: fmt.Sprintf("s%d", i%64),
							ToolCallID: fmt.Sprintf("c%d", i), Name: "noop", Arguments: []byte(`{}`)})
						if err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			c.waitCount(b, b.N)
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
		})
	}
}
