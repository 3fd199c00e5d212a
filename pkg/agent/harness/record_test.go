package harness_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-agents/cairn/pkg/agent/harness"
	"github.com/cairn-agents/cairn/pkg/agent/hook"
	"github.com/cairn-agents/cairn/pkg/events"
)

// builder is a SystemPromptFor whose prompt the test changes.
type builder struct {
	mu   sync.Mutex
	text string
	ver  uint64
}

func (b *builder) set(text string, ver uint64) {
	b.mu.Lock()
	b.text, b.ver = text, ver
	b.mu.Unlock()
}

func (b *builder) build([]string) harness.SystemPrompt {
	b.mu.Lock()
	defer b.mu.Unlock()
	return harness.SystemPrompt{Text: b.text, Resources: []events.ResourceVersion{{Kind: "skill", Name: "deploy", Version: b.ver}}}
}

// records returns the system prompts the session recorded, in order.
func records(t *testing.T, entries []events.Entry) []events.SystemPromptRecord {
	t.Helper()
	var out []events.SystemPromptRecord
	for i := range entries {
		r, ok, err := events.DecodeSystemPrompt(&entries[i])
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			out = append(out, r)
		}
	}
	return out
}

// The prompt each model call is sent with is recorded before the first
// call that uses it: at the start of a run, and at the save point where the
// builder's prompt changed during a tool call; an unchanged prompt records
// nothing.
func TestSystemPromptRecordedWhenItChanges(t *testing.T) {
	b := &builder{}
	b.set("v1", 7)
	g := newGate("gate")
	f := newFixture(t, toolThenText, harness.Config{SystemPromptFor: b.build}, g)
	var sent []string
	hook.On(f.h.Hooks(), func(_ context.Context, ev hook.BeforeProviderRequestEvent) (hook.RequestPatch, error) {
		sent = append(sent, ev.Request.SystemPrompt)
		return hook.RequestPatch{}, nil
	})
	done := f.prompt("go")
	recv(t, g.started)
	b.set("v2", 9) // a skill changed while the tool ran
	close(g.release)
	if err := wait(t, done); err != nil {
		t.Fatal(err)
	}
	if err := f.h.Prompt(context.Background(), user("again")); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sent, ","); got != "v1,v2,v2" {
		t.Fatalf("system prompts sent: %s, want v1,v2,v2", got)
	}
	want := "user:go | custom:cairn.system_prompt | assistant::toolUse | toolResult:gate done | custom:cairn.system_prompt | assistant:done:stop | user:again | assistant:done:stop"
	if got := summary(f.sess.Entries()); got != want {
		t.Fatalf("session:\n%s\nwant:\n%s", got, want)
	}
	rs := records(t, f.sess.Entries())
	if rs[0].Text != "v1" || rs[0].Resources[0].Version != 7 || rs[1].Text != "v2" || rs[1].Resources[0].Version != 9 {
		t.Fatalf("records: %+v", rs)
	}
	if rs[1].Digest != events.PromptDigest("v2") || rs[1].FromHook {
		t.Fatalf("record: %+v", rs[1])
	}

	// A harness started on the session (another owner, after a restart)
	// knows what was recorded last: the same prompt records nothing.
	f2 := newFixture(t, toolThenText, harness.Config{SystemPromptFor: b.build, Session: f.sess})
	before := len(f.sess.Entries())
	if err := f2.h.Prompt(context.Background(), user("third")); err != nil {
		t.Fatal(err)
	}
	if n := len(records(t, f.sess.Entries()[before:])); n != 0 {
		t.Fatalf("a new harness recorded the unchanged prompt again (%d records)", n)
	}
}

// A prompt a before_agent_start hook gives the run is the one recorded and
// sent for the whole run, over what the save point rebuilds; the rebuilt
// prompt applies from the next run.
func TestHookSystemPromptHoldsForTheRun(t *testing.T) {
	b := &builder{}
	b.set("built", 1)
	g := newGate("gate")
	f := newFixture(t, toolThenText, harness.Config{SystemPromptFor: b.build}, g)
	hooked := true
	hook.On(f.h.Hooks(), func(_ context.Context, ev hook.BeforeAgentStartEvent) (hook.BeforeAgentStartResult, error) {
		if !hooked {
			return hook.BeforeAgentStartResult{}, nil
		}
		s := ev.SystemPrompt + " +policy"
		return hook.BeforeAgentStartResult{SystemPrompt: &s}, nil
	})
	var sent []string
	hook.On(f.h.Hooks(), func(_ context.Context, ev hook.BeforeProviderRequestEvent) (hook.RequestPatch, error) {
		sent = append(sent, ev.Request.SystemPrompt)
		return hook.RequestPatch{}, nil
	})
	done := f.prompt("go")
	recv(t, g.started)
	b.set("rebuilt", 2)
	close(g.release)
	if err := wait(t, done); err != nil {
		t.Fatal(err)
	}
	hooked = false
	if err := f.h.Prompt(context.Background(), user("next")); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sent, ","); got != "built +policy,built +policy,rebuilt" {
		t.Fatalf("system prompts sent: %s", got)
	}
	rs := records(t, f.sess.Entries())
	if len(rs) != 2 || rs[0].Text != "built +policy" || !rs[0].FromHook || rs[1].Text != "rebuilt" || rs[1].FromHook {
		t.Fatalf("records: %+v", rs)
	}
}
