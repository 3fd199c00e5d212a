package orchestrator

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/nats-io/nats.go"
)

// A client that sends its next prompt (whenBusy reject, the default) the
// moment it sees agent_end must find the session idle: agent_end means the
// run has settled, not that it is about to.
func TestPromptUponAgentEndIsNotBusy(t *testing.T) {
	p := newPlatform(t)
	p.startOrchestrator("o1")
	// Many sessions at once: the window this test is about (agent_end out,
	// the run not yet returned) only opens under load.
	const sessions, prompts = 24, 6
	ends := make(chan string, sessions*prompts)
	rejected := make(chan string, sessions*prompts)
	sub, err := p.nc.Subscribe(p.n.AllEvents(), func(m *nats.Msg) {
		var ev events.Event
		if json.Unmarshal(m.Data, &ev) != nil {
			return
		}
		switch ev.Type {
		case events.EvAgentEnd:
			ends <- ev.SessionID
		case events.EvCommandRejected:
			rejected <- ev.SessionID + " " + ev.CommandID + ": " + ev.Error
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	sent := map[string]int{}
	for i := range sessions {
		sid := fmt.Sprintf("s%d", i)
		p.send(events.Command{ID: "c-" + sid, Type: events.CmdCreate, SessionID: sid, Tools: []string{"ls"}})
		p.send(events.Command{ID: "p0-" + sid, Type: events.CmdPrompt, SessionID: sid, Text: "list files"})
		sent[sid] = 1
	}
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	for left := sessions * prompts; left > 0; left-- {
		select {
		case sid := <-ends:
			if sent[sid] < prompts {
				p.send(events.Command{ID: fmt.Sprintf("p%d-%s", sent[sid], sid), Type: events.CmdPrompt, SessionID: sid, Text: "list files"})
				sent[sid]++
			}
		case r := <-rejected:
			t.Fatalf("a prompt sent upon the previous agent_end was refused: %s", r)
		case <-deadline.C:
			t.Fatalf("%d prompts did not end within 60s", left)
		}
	}
}
