package orchestrator

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/scripted"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// recording is a provider that keeps the messages of every request.
type recording struct {
	llm.Provider
	mu   sync.Mutex
	reqs [][]events.Message
}

func (r *recording) Stream(ctx context.Context, req *llm.Request, onDelta func(events.Delta)) (events.Message, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, append([]events.Message(nil), req.Messages...))
	r.mu.Unlock()
	return r.Provider.Stream(ctx, req, onDelta)
}

func (r *recording) requests() [][]events.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]events.Message(nil), r.reqs...)
}

type recordingModels struct{ r *recording }

func (m recordingModels) Resolve(ref string) (llm.Provider, llm.Model, error) {
	p, model, err := scriptedModels{m.r.Provider.(*scripted.Provider)}.Resolve(ref)
	if err != nil {
		return p, model, err
	}
	return m.r, model, nil
}

func (m recordingModels) Providers() []string { return []string{"scripted"} }

// A session that shrank while idle, and one evicted from memory, resume
// with the context they had: the next model call sees exactly the messages
// it would have seen, and the log's hash chain goes on.
func TestShrunkAndEvictedSessionsResumeWithTheirContext(t *testing.T) {
	p := newPlatform(t)
	sc, err := scripted.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recording{Provider: scripted.New(sc)}
	o, err := New(Config{Conn: p.nc, Log: p.log, Instance: "o1", Partitions: 4, LeaseTTL: testLeaseTTL,
		ShrinkAfter: time.Millisecond, Models: recordingModels{rec}, DefaultModel: "scripted/test",
		Logger: failOnRefusedMove(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer kittest.Run(t, context.Background(), "orchestrator", o.Run)()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		kittest.Eventually(t, 30*time.Second, what, cond)
	}

	p.send(events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "s1", Tools: []string{"ls"}})
	p.send(events.Command{ID: "p1", Type: events.CmdPrompt, SessionID: "s1", Text: "list files"})
	p.waitLog("s1", "first reply", func(es []events.Entry) bool { return named("p1")(es) && lastText(es) == "I see the files." })
	waitFor("the idle session shrinks", func() bool { n, s := o.Resident(); return n == 1 && s == 1 })

	// Each next prompt's first request must be the previous context, the
	// previous reply and the new prompt.
	check := func(prompt string) {
		t.Helper()
		before := len(rec.requests())
		p.send(events.Command{ID: prompt, Type: events.CmdPrompt, SessionID: "s1", Text: "hello " + prompt})
		es := p.waitLog("s1", "reply to "+prompt, func(es []events.Entry) bool { return repliedAfter(es, prompt) == "ok" })
		reqs := rec.requests()
		prev, next := reqs[before-1], reqs[before]
		var reply events.Message
		for i := len(es) - 1; i >= 0; i-- {
			if m := es[i].Message; m != nil && m.CommandID == prompt {
				reply = *es[i-1].Message // the answer before this prompt
				break
			}
		}
		want, _ := json.Marshal(append(append(prev, reply), *userOf(es, prompt)))
		got, _ := json.Marshal(next)
		if string(got) != string(want) {
			t.Fatalf("%s: the first request after resuming\n%s\nwant\n%s", prompt, got, want)
		}
		recs := mustRecords(t, p, "s1")
		if errs := session.VerifyChain(recs); len(errs) != 0 {
			t.Fatalf("%s: hash chain: %v", prompt, errs)
		}
		for _, r := range recs {
			if r.Entry.Type == events.EntryCommandRejected {
				t.Fatalf("%s: a command was refused: %+v", prompt, r.Entry)
			}
		}
	}
	check("p2")

	waitFor("shrunk again", func() bool { _, s := o.Resident(); return s == 1 })
	if g := testutil.ToFloat64(o.metrics.shrunk); g != 1 {
		t.Fatalf("shrunk gauge %v with one shrunk session", g)
	}
	if n := o.EvictIdle(); n != 1 {
		t.Fatalf("EvictIdle asked %d sessions, want 1", n)
	}
	waitFor("the session leaves memory", func() bool { n, s := o.Resident(); return n == 0 && s == 0 })
	if g := testutil.ToFloat64(o.metrics.shrunk); g != 0 {
		t.Fatalf("shrunk gauge %v once the shrunk session was evicted", g)
	}
	check("p3")
}

// repliedAfter is the text of the last assistant message after the user
// message of prompt commandID, "" while there is none: the previous
// prompt's reply, also "ok", must not count.
func repliedAfter(es []events.Entry, commandID string) string {
	for i := range es {
		if m := es[i].Message; m != nil && m.Role == events.RoleUser && es[i].CommandID == commandID {
			return lastText(es[i+1:])
		}
	}
	return ""
}

func userOf(es []events.Entry, commandID string) *events.Message {
	for i := range es {
		if m := es[i].Message; m != nil && m.Role == events.RoleUser && m.CommandID == commandID {
			return m
		}
	}
	return nil
}
