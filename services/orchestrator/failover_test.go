package orchestrator

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provider/scripted"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// startOn runs an orchestrator over its own connection, so that closing
// the connection cuts it off like a crashed process.
func (p *platform) startOn(nc *nats.Conn, name string) (stop func()) {
	p.t.Helper()
	sc, err := scripted.Parse([]byte(script))
	if err != nil {
		p.t.Fatal(err)
	}
	prov := scripted.New(sc)
	log, err := session.NewJetStreamLog(context.Background(), mustJS(p.t, nc), session.WithCreate(false))
	if err != nil {
		p.t.Fatal(err)
	}
	o, err := New(Config{Conn: nc, Log: log, Instance: name, Partitions: 4, LeaseTTL: time.Second,
		Models: scriptedModels{prov}, DefaultModel: "scripted/test"})
	if err != nil {
		p.t.Fatal(err)
	}
	return kittest.Run(p.t, context.Background(), "orchestrator "+name, o.Run)
}

func TestFailoverToTheOtherInstance(t *testing.T) {
	p := newPlatform(t)
	srv := p.nc.ConnectedUrl()
	ncA, err := nats.Connect(srv)
	if err != nil {
		t.Fatal(err)
	}
	stopA := p.startOn(ncA, "a")
	stopB := p.startOn(mustConnect(t, srv), "b")
	defer stopB()

	const n = 8
	for i := 0; i < n; i++ {
		sid := fmt.Sprintf("f%d", i)
		p.send(events.Command{ID: "create-" + sid, Type: events.CmdCreate, SessionID: sid, Tools: []string{}})
		p.send(events.Command{ID: "p1-" + sid, Type: events.CmdPrompt, SessionID: sid, Text: "hello"})
	}
	for i := 0; i < n; i++ {
		sid := fmt.Sprintf("f%d", i)
		p.waitLog(sid, "first reply", func(es []events.Entry) bool { return named("p1-"+sid)(es) && lastText(es) == "ok" })
	}
	// A dies without a word: its connection drops, its leases expire.
	ncA.Close()
	stopA()
	for i := 0; i < n; i++ {
		sid := fmt.Sprintf("f%d", i)
		p.send(events.Command{ID: "p2-" + sid, Type: events.CmdPrompt, SessionID: sid, Text: "again"})
	}
	for i := 0; i < n; i++ {
		sid := fmt.Sprintf("f%d", i)
		es := p.waitLog(sid, "reply after failover", func(es []events.Entry) bool {
			return named("p2-"+sid)(es) && lastText(es) == "ok" && len(es) >= 5
		})
		seen := map[string]int{}
		for _, e := range es {
			if e.CommandID != "" {
				seen[e.CommandID]++
			}
		}
		for _, id := range []string{"create-" + sid, "p1-" + sid, "p2-" + sid} {
			if seen[id] != 1 {
				t.Errorf("%s: command %s named by %d entries, want exactly 1", sid, id, seen[id])
			}
		}
	}
}

func mustConnect(t testing.TB, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func mustJS(t testing.TB, nc *nats.Conn) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}
