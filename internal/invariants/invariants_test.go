package invariants

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
)

// chain lays entries out as a log: each records its parent's digest, and
// Data holds its bytes as stored.
func chain(t *testing.T, entries ...events.Entry) []session.Record {
	t.Helper()
	recs := make([]session.Record, len(entries))
	prev := ""
	for i, e := range entries {
		e.ParentDigest = prev
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		recs[i] = session.Record{Session: events.DefaultRef("s1"), Seq: uint64(10 + i), Entry: e, Data: data, Digest: session.Digest(data)}
		prev = session.Digest(data)
	}
	return recs
}

func msg(id, cmd string, m events.Message) events.Entry {
	return events.Entry{Type: events.EntryMessage, ID: id, CommandID: cmd, Message: &m}
}

// aSession is a settled session: created, prompted (command p1), one ls
// call with its result, an answer.
func aSession() []events.Entry {
	return []events.Entry{
		{Type: events.EntrySession, ID: "s1", CommandID: "c0"},
		msg("e1", "p1", events.Message{Role: events.RoleUser, Content: events.TextContent("list files")}),
		msg("e2", "", events.Message{Role: events.RoleAssistant, StopReason: events.StopToolUse,
			Content: events.Content{Blocks: []events.Block{{Type: events.BlockToolCall, ID: "call1", Name: "ls"}}}}),
		msg("e3", "", events.Message{Role: events.RoleToolResult, ToolCallID: "call1", ToolName: "ls", Content: events.TextContent("a b")}),
		msg("e4", "", events.Message{Role: events.RoleAssistant, StopReason: events.StopEnd, Content: events.TextContent("I see the files.")}),
	}
}

func TestAnIntactSessionPasses(t *testing.T) {
	st, problems := Check("s1", chain(t, aSession()...), []string{"c0", "p1"})
	if len(problems) != 0 {
		t.Fatalf("problems in an intact log: %v", problems)
	}
	if st.ToolCalls != 1 || st.Answered != 1 || !st.ChainOK {
		t.Fatalf("stats %+v", st)
	}
}

func TestCatchesALostCommand(t *testing.T) {
	st, problems := Check("s1", chain(t, aSession()...), []string{"c0", "p1", "p2"})
	if st.Lost != 1 || !has(problems, "acknowledged command p2 is named by 0 entries") {
		t.Fatalf("a planted lost command: stats %+v, problems %v", st, problems)
	}
}

func TestCatchesACommandAppliedTwice(t *testing.T) {
	es := aSession()
	es = append(es, msg("e5", "p1", events.Message{Role: events.RoleUser, Content: events.TextContent("list files")}),
		msg("e6", "", events.Message{Role: events.RoleAssistant, StopReason: events.StopEnd, Content: events.TextContent("again")}))
	st, problems := Check("s1", chain(t, es...), []string{"c0", "p1"})
	if st.Twice != 1 || !has(problems, "p1 is named by 2 entries") {
		t.Fatalf("a command applied twice: stats %+v, problems %v", st, problems)
	}
}

func TestCatchesADuplicatedToolRun(t *testing.T) {
	es := aSession()
	dup := msg("e3b", "", events.Message{Role: events.RoleToolResult, ToolCallID: "call1", ToolName: "ls", Content: events.TextContent("a b")})
	es = append(es[:4], append([]events.Entry{dup}, es[4:]...)...)
	st, problems := Check("s1", chain(t, es...), []string{"c0", "p1"})
	if st.WithoutOneResult != 1 || !has(problems, "tool call e2/call1 has 2 results") {
		t.Fatalf("a tool run twice: stats %+v, problems %v", st, problems)
	}
}

func TestCatchesACallWithoutResultAndAnUnsettledSession(t *testing.T) {
	es := aSession()[:3]
	st, problems := Check("s1", chain(t, es...), []string{"c0", "p1"})
	if st.WithoutOneResult != 1 || !has(problems, "has 0 results") || !has(problems, "has not settled") {
		t.Fatalf("stats %+v, problems %v", st, problems)
	}
}

func TestCatchesABrokenChain(t *testing.T) {
	recs := chain(t, aSession()...)
	// The tool's output edited in place after the answer recorded its digest.
	recs[3].Data = []byte(strings.Replace(string(recs[3].Data), "a b", "rm -rf", 1))
	st, problems := Check("s1", recs, []string{"c0", "p1"})
	if st.ChainOK || !has(problems, "hash chain") {
		t.Fatalf("a broken chain: stats %+v, problems %v", st, problems)
	}
}

func has(problems []string, part string) bool {
	for _, p := range problems {
		if strings.Contains(p, part) {
			return true
		}
	}
	return false
}
