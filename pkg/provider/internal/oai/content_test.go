package oai

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
)

// convert turns msgs into each API's request messages, as JSON.
func convert(t *testing.T, msgs ...events.Message) (chat, resp string, chatErr, respErr *llm.Error) {
	t.Helper()
	cfg := Config{BaseURL: "http://127.0.0.1:1", Name: "test"}
	req := &llm.Request{Messages: msgs}
	c, chatErr := NewChat(cfg, false).messages(req)
	r, respErr := NewResponses(cfg).input(req)
	return marshal(t, c), marshal(t, r), chatErr, respErr
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestContentRefusedAlikeByBothAPIs(t *testing.T) {
	image := events.Block{Type: events.BlockImage, MimeType: "image/png", Blob: "sha256-abc"}
	for _, tc := range []struct {
		name string
		msg  events.Message
		want string
	}{
		{"user image without data", events.Message{Role: events.RoleUser, Content: events.Content{Blocks: []events.Block{events.TextBlock("look"), image}}},
			"test: messages[0]: content[1]: image has no inline data (blob sha256-abc must be resolved before the call)"},
		{"thinking in a user message", events.Message{Role: events.RoleUser, Content: events.Content{Blocks: []events.Block{{Type: events.BlockThinking, Thinking: "x"}}}},
			"test: messages[0]: content[0]: block type thinking cannot be sent in a user message"},
		{"tool result image without data", events.Message{Role: events.RoleToolResult, ToolCallID: "call_1", Content: events.Content{Blocks: []events.Block{image}}},
			"test: messages[0]: content[0]: image has no inline data (blob sha256-abc must be resolved before the call)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, cerr, rerr := convert(t, tc.msg)
			for api, err := range map[string]*llm.Error{"chat": cerr, "responses": rerr} {
				if err == nil || err.Kind != llm.KindInvalidRequest || err.Message != tc.want {
					t.Errorf("%s: err = %v, want invalid request %q", api, err, tc.want)
				}
			}
		})
	}
}

func TestToolResultImagesFollowAsUserMessage(t *testing.T) {
	img := events.Block{Type: events.BlockImage, MimeType: "image/png", Data: "iVBORw0KGgo="}
	chat, resp, cerr, rerr := convert(t, events.Message{Role: events.RoleToolResult, ToolCallID: "call_1|fc_1", ToolName: "read",
		Content: events.Content{Blocks: []events.Block{img}}})
	if cerr != nil || rerr != nil {
		t.Fatal(cerr, rerr)
	}
	for api, got := range map[string]string{"chat": chat, "responses": resp} {
		for _, want := range []string{`"(see the attached image)"`, `Image from the result of tool call call_1|fc_1:`, `data:image/png;base64,iVBORw0KGgo=`} {
			if !strings.Contains(got, want) {
				t.Errorf("%s: %s lacks %s", api, got, want)
			}
		}
	}
}
