package projector

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/services/projector/internal/store"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// seqMsg is a delivered message that knows only its sequence.
type seqMsg struct {
	jetstream.Msg // unused methods panic
	seq           uint64
	data          []byte
}

func (m seqMsg) Metadata() (*jetstream.MsgMetadata, error) {
	return &jetstream.MsgMetadata{Sequence: jetstream.SequencePair{Stream: m.seq}}, nil
}
func (m seqMsg) Subject() string      { return "cairn.session.default.s1" }
func (m seqMsg) Data() []byte         { return m.data }
func (m seqMsg) Headers() nats.Header { return nil }
func (m seqMsg) Ack() error           { return nil }

// A consumer that delivers past the next sequence (out of order, as seen
// during a leader change) must not skip: the pump keeps what came before
// the gap and stops with errGap, so the consumer is recreated after it.
func TestPumpStopsAtAGap(t *testing.T) {
	db, err := store.Open("db", store.Options{FS: vfs.NewMem(), MemTableSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			t.Errorf("close db: %v", err)
		}
	}()
	w, err := db.NewWriter()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := w.Close(); err != nil {
			t.Errorf("close w: %v", err)
		}
	}()
	msgs := make(chan *delivery, 8)
	decoded := make(chan struct{})
	close(decoded)
	parent := (*string)(nil)
	for i, seq := range []uint64{1, 2, 4} {
		e := events.Entry{V: 1, Type: events.EntryLabel, ID: fmt.Sprintf("e%d", i), ParentID: parent,
			Timestamp: events.FormatTime(time.Unix(1, 0)), TargetID: new(string)}
		if i == 0 {
			e = events.Entry{V: 1, Type: events.EntrySession, ID: "s1", Timestamp: events.FormatTime(time.Unix(1, 0))}
		}
		data, _ := e.MarshalJSON()
		msgs <- &delivery{items: []item{{msg: seqMsg{seq: seq, data: data}, entry: e}}, ready: decoded}
	}
	p := &pump{w: w, batch: 10, prog: &progress{}, ack: true}
	err = p.run(context.Background(), msgs)
	if !errors.Is(err, errGap) {
		t.Fatalf("run = %v, want errGap", err)
	}
	if w.Applied() != 2 {
		t.Fatalf("applied %d after the gap, want 2 committed", w.Applied())
	}
}
