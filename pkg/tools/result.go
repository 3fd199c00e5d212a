package tools

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// textResult returns a result of one text block with details marshalled
// from d (nil for none).
func textResult(text string, d any) tool.Result {
	r := tool.Text(text)
	r.Details = details(d)
	return r
}

// errorResult is textResult with IsError set.
func errorResult(text string, d any) tool.Result {
	r := textResult(text, d)
	r.IsError = true
	return r
}

func details(d any) json.RawMessage {
	if d == nil {
		return nil
	}
	b, err := json.Marshal(d)
	if err != nil {
		panic(fmt.Sprintf("tools: details not encodable: %v", err)) // our own types; a bug
	}
	return b
}

// spec returns a parallel tool's spec with its schema compacted.
func spec(name, description, schema string, idempotent bool) events.ToolSpec {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(schema)); err != nil {
		panic(fmt.Sprintf("tools: %s schema is not JSON: %v", name, err)) // a constant of ours; a test compiles it
	}
	return events.ToolSpec{
		Name:        name,
		Description: description,
		Parameters:  b.Bytes(),
		Mode:        events.Parallel,
		Idempotent:  idempotent,
	}
}
