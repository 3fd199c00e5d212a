package session

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
)

// outside is JSON as a model, an approver, a hook, an MCP server or a pi
// file may send it: pretty-printed across lines, with tabs, a raw U+2028 in
// a string, deep nesting and a number no float64 holds.
var outside = json.RawMessage("{\n\t\"command\" : \"echo hi\u2028there\",\r\n  \"deep\": " +
	strings.Repeat("[", 64) + "\n1" + strings.Repeat("]", 64) +
	",\n  \"big\": 123456789012345678901234567890e-3\n}\n")

// outsideEntries holds one entry of every type that carries outside JSON,
// the JSON in each member it can come in.
func outsideEntries() []events.Entry {
	call := events.Block{Type: events.BlockToolCall, ID: "c1", Name: "bash", Arguments: outside, Extra: events.Extra{"x": outside}}
	x := events.Extra{"ext": outside}
	return []events.Entry{
		{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleAssistant, StopReason: events.StopToolUse,
			Content: events.Content{Blocks: []events.Block{call}}, Extra: x}, Extra: x},
		{Type: events.EntryApprovalRequested, ToolCallID: "c1", ToolName: "bash", Arguments: outside, Extra: x},
		{Type: events.EntryApprovalAnswered, ToolCallID: "c1", Decision: events.DecisionApprove, Arguments: outside, Extra: x},
		{Type: events.EntryTaskStarted, ToolCallID: "c1", ToolName: "task", Arguments: outside, ChildSessionID: "child", Extra: x},
		{Type: events.EntryToolResultHeld, ToolCallID: "c1", Message: &events.Message{Role: events.RoleToolResult, ToolCallID: "c1",
			ToolName: "bash", Details: outside, Content: events.Content{Blocks: []events.Block{{Type: events.BlockText, Text: "ok"}}}}},
		{Type: events.EntryMessage, Message: &events.Message{Role: events.RoleToolResult, ToolCallID: "c1", ToolName: "mcp",
			Details: outside, Content: events.Content{Blocks: []events.Block{{Type: events.BlockText, Text: "ok"}}}}},
		{Type: events.EntryCompaction, Summary: "s", FirstKeptEntryID: "e1", Details: outside, Extra: x},
		{Type: events.EntryBranchSummary, FromID: "root", Summary: "s", Details: outside, Extra: x},
		{Type: events.EntryCustom, CustomType: "ext", Data: outside, Extra: x},
		{Type: events.EntryCustomMessage, CustomType: "ext", Details: outside, Extra: x,
			Content: events.Content{Blocks: []events.Block{{Type: events.BlockText, Text: "hi"}}}},
		{Type: events.EntryModelChange, Provider: "p", ModelID: "m", Extra: x},
		{Type: events.EntrySessionInfo, Name: "n", Extra: x},
		{Type: events.EntryTurnInterrupted, Reason: "crash", Extra: x},
	}
}

// TestOutsideJSONStoredOnOneLine: whatever the outside JSON looks like,
// every entry type stores one line, its digest chains, and the JSON-lines
// framing of every output reads back line by line to the stored value.
func TestOutsideJSONStoredOnOneLine(t *testing.T) {
	ctx := context.Background()
	log := NewMemLog(0, nil)
	s, err := Create(ctx, log, events.Entry{ID: "s1", Model: "p/m", Extra: events.Extra{"ext": outside}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Append(ctx, events.Entry{Type: events.EntryMessage, ID: "e1", Message: &events.Message{Role: events.RoleUser, Content: events.Content{Blocks: []events.Block{{Type: events.BlockText, Text: "hi"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range outsideEntries() {
		rec, err := s.Append(ctx, e)
		if err != nil {
			t.Fatalf("%s: %v", e.Type, err)
		}
		if bytes.ContainsAny(rec.Data, "\n\r") || bytes.Contains(rec.Data, []byte("\u2028")) {
			t.Errorf("%s: stored across lines: %s", e.Type, rec.Data)
		}
		if !bytes.Contains(rec.Data, []byte(`\u2028`)) || !bytes.Contains(rec.Data, []byte("123456789012345678901234567890e-3")) {
			t.Errorf("%s: stored bytes lost the value's escape or its number: %s", e.Type, rec.Data)
		}
	}
	recs, err := log.Read(ctx, s.Ref(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if probs := VerifyChain(recs); probs != nil {
		t.Fatalf("chain: %v", probs)
	}
	var out []byte
	for _, r := range recs {
		if out, err = events.AppendLine(out, r.Data); err != nil {
			t.Fatal(err)
		}
	}
	checkLines(t, out, recs)
}

// TestEntryStoredAcrossLinesKeepsItsDigest: an entry stored before the rule,
// its arguments across lines, keeps the digest its child recorded, and
// AppendLine frames it on one line as the same JSON value.
func TestEntryStoredAcrossLinesKeepsItsDigest(t *testing.T) {
	old := []byte("{\"v\":1,\"type\":\"approval_requested\",\"id\":\"a1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:00.000Z\"," +
		"\"toolCallId\":\"c1\",\"toolName\":\"bash\",\"arguments\":" + string(outside) + "}")
	head := []byte(`{"v":1,"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z"}`)
	child := []byte(`{"v":1,"type":"leaf","id":"l1","parentId":"a1","timestamp":"2026-01-01T00:00:00.000Z","parentDigest":"` + Digest(old) + `","targetId":"a1"}`)
	sid := events.SessionRef{Tenant: events.DefaultTenant, ID: "s1"}
	var recs []Record
	for i, data := range [][]byte{head, old, child} {
		r, err := decodeRecord(sid, uint64(i+1), data)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	recs[1].Entry.ParentDigest = "" // the old entry is the first after the header in this log
	if probs := VerifyChain(recs[1:]); probs != nil {
		t.Fatalf("chain over stored bytes: %v", probs)
	}
	var out []byte
	for _, r := range recs {
		var err error
		if out, err = events.AppendLine(out, r.Data); err != nil {
			t.Fatal(err)
		}
	}
	checkLines(t, out, recs)
}

// checkLines reads out as JSON lines: one line per record, each decoding to
// the entry its record holds.
func checkLines(t *testing.T, out []byte, recs []Record) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		if n >= len(recs) {
			t.Fatalf("more lines than records: %s", sc.Bytes())
		}
		got, err := events.DecodeEntry(sc.Bytes())
		if err != nil {
			t.Fatalf("line %d: %v: %s", n+1, err, sc.Bytes())
		}
		var a, b any
		want, _ := recs[n].Entry.MarshalJSON()
		gotJSON, _ := got.MarshalJSON()
		if json.Unmarshal(want, &a) != nil || json.Unmarshal(gotJSON, &b) != nil || !jsonEqual(a, b) {
			t.Errorf("line %d: %s\nwant the value of %s", n+1, gotJSON, want)
		}
		n++
	}
	if n != len(recs) {
		t.Fatalf("%d lines for %d records", n, len(recs))
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// FuzzEntryOneLine: any entry the writer accepts is stored as one line of
// valid JSON that decodes.
func FuzzEntryOneLine(f *testing.F) {
	f.Add(string(outside), "x")
	f.Add("{}", "\u2028")
	f.Add("[1,\n2]", "a\nb")
	f.Fuzz(func(t *testing.T, raw, text string) {
		for _, e := range outsideEntries() {
			e.ID, e.Timestamp = "e1", "2026-01-01T00:00:00.000Z"
			p := "e0"
			e.ParentID = &p
			r := json.RawMessage(raw)
			if e.Arguments != nil {
				e.Arguments = r
			}
			if e.Details != nil {
				e.Details = r
			}
			if e.Data != nil {
				e.Data = r
			}
			e.Extra = events.Extra{"ext": r, "note": json.RawMessage(`"` + text + `"`)}
			e.Reason = text
			data, err := encodeEntry(e)
			if err != nil {
				continue // refused: nothing is stored
			}
			if bytes.ContainsAny(data, "\n\r") || bytes.Contains(data, []byte("\u2028")) || bytes.Contains(data, []byte("\u2029")) {
				t.Fatalf("%s: accepted across lines: %q", e.Type, data)
			}
			if !json.Valid(data) {
				t.Fatalf("%s: accepted as invalid JSON: %q", e.Type, data)
			}
		}
	})
}
