package orchestrator

import (
	"context"
	"log/slog"
	"testing"

	"github.com/cairn-agents/cairn/services/orchestrator/internal/lifecycle"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// failOnRefusedMove is a logger that fails t when an actor logs a move its
// lifecycle table refuses: every test that runs an orchestrator through it
// checks that the actors only make the moves the table allows.
func failOnRefusedMove(t testing.TB) *slog.Logger {
	return slog.New(refusedMoves{t})
}

type refusedMoves struct{ t testing.TB }

func (h refusedMoves) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }

func (h refusedMoves) Handle(_ context.Context, r slog.Record) error {
	if r.Message == msgRefusedMove {
		var err slog.Value
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "err" {
				err = a.Value
			}
			return true
		})
		h.t.Errorf("%s: %v", r.Message, err)
	}
	return nil
}

func (h refusedMoves) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h refusedMoves) WithGroup(string) slog.Handler      { return h }

// recordHandler keeps the messages of the records it is given.
type recordHandler struct{ msgs *[]string }

func (h recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h recordHandler) Handle(_ context.Context, r slog.Record) error {
	*h.msgs = append(*h.msgs, r.Message)
	return nil
}
func (h recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h recordHandler) WithGroup(string) slog.Handler      { return h }

// TestActorRefusesAnIllegalMove: a move the table refuses leaves the state
// as it was, says so in the log (where failOnRefusedMove finds it), and
// does not touch the gauges.
func TestActorRefusesAnIllegalMove(t *testing.T) {
	var msgs []string
	m, err := newMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	a := &actor{o: &Orchestrator{metrics: m}, log: slog.New(recordHandler{&msgs})}
	if prev := a.to(lifecycle.Shrunk); prev != lifecycle.Loading || !a.is(lifecycle.Loading) {
		t.Fatalf("loading → shrunk: left %s, now %s", prev, a.state.State())
	}
	a.move(lifecycle.Idle, lifecycle.Settling)
	if len(msgs) != 2 || msgs[0] != msgRefusedMove || msgs[1] != msgRefusedMove {
		t.Fatalf("logged %q", msgs)
	}
	if g := testutil.ToFloat64(m.shrunk); g != 0 {
		t.Fatalf("shrunk gauge %v after a refused move", g)
	}
	// The legal ones go through, and the gauge follows shrunk.
	for _, s := range []lifecycle.State{lifecycle.Idle, lifecycle.Shrunk} {
		a.to(s)
	}
	if g := testutil.ToFloat64(m.shrunk); g != 1 || !a.is(lifecycle.Shrunk) || len(msgs) != 2 {
		t.Fatalf("after idle, shrunk: gauge %v, state %s, log %q", g, a.state.State(), msgs)
	}
	a.to(lifecycle.Evicted)
	if g := testutil.ToFloat64(m.shrunk); g != 0 {
		t.Fatalf("shrunk gauge %v after shrunk → evicted", g)
	}
}
