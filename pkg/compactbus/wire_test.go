package compactbus_test

import (
	"errors"
	"testing"

	"github.com/cairn-agents/cairn/pkg/compactbus"
	"github.com/cairn-agents/cairn/pkg/compaction"
	"github.com/cairn-agents/cairn/pkg/events"
)

func TestRequestRoundTripAndValidation(t *testing.T) {
	ok := compactbus.Request{SessionID: "s1", RequestID: "r1", Model: "scripted/m", Reason: "manual", Job: compaction.Job{Transcript: "[User]: hi", MaxTokens: 10}}
	data, err := ok.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := compactbus.DecodeRequest(data)
	if err != nil || got.Job.Transcript != "[User]: hi" || got.Kind != compactbus.KindCompaction || got.V != compactbus.Version {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	for field, bad := range map[string]compactbus.Request{
		"sessionId":  {SessionID: "no spaces", RequestID: "r", Model: "a/b", Job: compaction.Job{Transcript: "x"}},
		"requestId":  {SessionID: "s1", Model: "a/b", Job: compaction.Job{Transcript: "x"}},
		"model":      {SessionID: "s1", RequestID: "r", Model: "nomodel", Job: compaction.Job{Transcript: "x"}},
		"transcript": {SessionID: "s1", RequestID: "r", Model: "a/b"},
	} {
		_, err := bad.Encode()
		var fe *events.FieldError
		var ce *compaction.FieldError
		if !(errors.As(err, &fe) && fe.Field == field) && !(errors.As(err, &ce) && ce.Field == field) {
			t.Errorf("%s: %v", field, err)
		}
	}
}

func TestToolResultsAreNotCompactionResults(t *testing.T) {
	tool, err := events.ToolResult{SessionID: "s1", ToolCallID: "c1", ToolName: "read", Content: []events.Block{events.TextBlock("x")}}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := compactbus.DecodeResult(tool); err == nil {
		t.Fatal("a tool result decoded as a compaction result")
	}
	r, err := compactbus.Result{SessionID: "s1", RequestID: "r1", Summary: compaction.Summary{Text: "s"}}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := events.DecodeToolResult(r); err == nil {
		t.Fatal("a compaction result decoded as a tool result")
	}
	if got, err := compactbus.DecodeResult(r); err != nil || got.Summary.Text != "s" {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	a1, a2, b := compactbus.RequestID(events.DefaultRef("s1"), "a"), compactbus.RequestID(events.DefaultRef("s1"), "a"), compactbus.RequestID(events.DefaultRef("s1"), "b")
	if a1 == b || a1 != a2 {
		t.Fatal("request ids are not derived from their parts")
	}
}
