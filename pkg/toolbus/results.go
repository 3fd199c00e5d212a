package toolbus

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/follow"
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

// ResultsOption changes where ConsumeResults starts.
type ResultsOption func(*follow.Config)

// OnlyNew makes ConsumeResults skip the results stored before it is called.
func OnlyNew() ResultsOption { return func(c *follow.Config) { c.From = 0 } }

// ConsumeResults calls fn, from one goroutine and in stream order, for every
// tool result of session sid (every session when sid is the zero SessionRef) stored in
// CAIRN_RESULTS, from the oldest on (with [OnlyNew], from the first stored
// after the call), and then for each new one, until stop is called or ctx
// is done. Results of other kinds on the same subjects (such as compactions)
// are skipped. It acknowledges nothing: an orchestrator that must not see a
// result twice keeps its own position (Seq).
//
// It reads with a [follow.Follower], so results keep coming when the NATS
// node serving its consumer is lost and stays down; fn is not called after
// stop returns.
func (b *Bus) ConsumeResults(ctx context.Context, sid events.SessionRef, fn func(Result), opts ...ResultsOption) (stop func(), err error) {
	filter := b.names.AllResults()
	if sid != (events.SessionRef{}) {
		if err := sid.Validate(); err != nil {
			return nil, err
		}
		filter = b.names.ResultSubject(sid)
	}
	cfg := follow.Config{Stream: b.names.ResultsStream(), Filter: filter, From: 1, Logger: b.log}
	for _, o := range opts {
		o(&cfg)
	}
	f, err := follow.Start(ctx, b.js, cfg, func(m jetstream.Msg) {
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
	var once sync.Once
	return func() { once.Do(f.Stop) }, nil
}
