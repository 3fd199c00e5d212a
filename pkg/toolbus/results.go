package toolbus

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/nats-io/nats.go/jetstream"
)

// Result is one tool result read from CAIRN_RESULTS.
type Result struct {
	events.ToolResult
	Seq uint64 // stream sequence in CAIRN_RESULTS
	// Err is set, and ToolResult empty, when the stored message is not a valid
	// tool result; the caller decides whether to log or fail.
	Err error
}

// ConsumeResults calls fn, from one goroutine and in stream order, for every
// tool result of session sid (every session when sid is "") stored in
// CAIRN_RESULTS, from the oldest on, and then for each new one, until stop is
// called or ctx is done. Results of other kinds on the same subjects (such as
// compactions) are skipped. It reads with an ordered consumer and
// acknowledges nothing: an orchestrator that must not see a result twice
// keeps its own position (Seq).
func (b *Bus) ConsumeResults(ctx context.Context, sid string, fn func(Result)) (stop func(), err error) {
	filter := b.names.AllResults()
	if sid != "" {
		if err := events.ValidateSessionID(sid); err != nil {
			return nil, err
		}
		filter = b.names.ResultSubject(sid)
	}
	cons, err := b.js.OrderedConsumer(ctx, b.names.ResultsStream(), jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{filter},
		DeliverPolicy:  jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return nil, fmt.Errorf("toolbus: consume results: %w", err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		meta, _ := m.Metadata()
		var seq uint64
		if meta != nil {
			seq = meta.Sequence.Stream
		}
		var kind struct {
			Kind string `json:"kind"`
		}
		if json.Unmarshal(m.Data(), &kind) == nil && kind.Kind != "" && kind.Kind != events.ResultKindTool {
			return
		}
		r, err := events.DecodeToolResult(m.Data())
		fn(Result{ToolResult: r, Seq: seq, Err: err})
	})
	if err != nil {
		return nil, fmt.Errorf("toolbus: consume results: %w", err)
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-ctx.Done():
		case <-done:
		}
		cc.Stop()
		<-cc.Closed()
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		<-stopped
	}, nil
}
