package oai

import (
	"strings"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/internal/stream"
)

// The content of user messages and tool results is the same in both APIs
// but for the part types: these build it with the API's text and image
// parts. i is the message's index in the request, name the provider's.

// userParts converts the blocks of user message i: text (empty text
// dropped) and inline images; any other block is refused.
func userParts[P any](name string, i int, blocks []events.Block, text func(string) P, image func(events.Block) P) ([]P, *llm.Error) {
	var parts []P
	for j, b := range blocks {
		switch b.Type {
		case events.BlockText:
			if b.Text != "" {
				parts = append(parts, text(b.Text))
			}
		case events.BlockImage:
			if b.Data == "" {
				return nil, noImageData(name, i, j, b)
			}
			parts = append(parts, image(b))
		default:
			return nil, stream.Invalid("%s: messages[%d]: content[%d]: block type %s cannot be sent in a user message", name, i, j, b.Type)
		}
	}
	return parts, nil
}

// resultParts splits tool result i into the text body the API's tool output
// carries and the images, which follow as a user message (see imagesFrom).
func resultParts[P any](name string, i int, m events.Message, image func(events.Block) P) (string, []P, *llm.Error) {
	var text []string
	var images []P
	for j, b := range m.Content.Blocks {
		switch b.Type {
		case events.BlockText:
			text = append(text, b.Text)
		case events.BlockImage:
			if b.Data == "" {
				return "", nil, noImageData(name, i, j, b)
			}
			images = append(images, image(b))
		}
	}
	body := strings.Join(text, "\n")
	if body == "" && len(images) > 0 {
		body = "(see the attached image)"
	}
	return body, images, nil
}

// imagesFrom is the content of the user message that carries the images of
// tool result m, introduced by text.
func imagesFrom[P any](m events.Message, images []P, text func(string) P) []P {
	return append([]P{text("Image from the result of tool call " + m.ToolCallID + ":")}, images...)
}

func noImageData(name string, i, j int, b events.Block) *llm.Error {
	return stream.Invalid("%s: messages[%d]: content[%d]: image has no inline data (blob %s must be resolved before the call)", name, i, j, b.Blob)
}

// toolArgs is a tool call's arguments as sent: "{}" when it has none.
func toolArgs(b events.Block) string {
	if len(b.Arguments) == 0 {
		return "{}"
	}
	return string(b.Arguments)
}
