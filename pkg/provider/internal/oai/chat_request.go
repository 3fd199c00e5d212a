package oai

import (
	"encoding/json"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/internal/stream"
)

var efforts = map[string]shared.ReasoningEffort{
	"minimal": shared.ReasoningEffortMinimal, "low": shared.ReasoningEffortLow,
	"medium": shared.ReasoningEffortMedium, "high": shared.ReasoningEffortHigh, "xhigh": shared.ReasoningEffortXhigh,
}

// effort maps a thinking level; "" means do not send one.
func effort(name string, req *llm.Request) (shared.ReasoningEffort, *llm.Error) {
	level := req.ThinkingLevel
	if level == "" || level == "off" {
		return "", nil
	}
	e, ok := efforts[level]
	if !ok {
		return "", stream.Invalid("%s: thinking level %q: want off, minimal, low, medium, high or xhigh", name, level)
	}
	if !req.Model.Reasoning {
		return "", nil
	}
	return e, nil
}

func maxTokens(req *llm.Request) int64 {
	if req.MaxTokens > 0 {
		return req.MaxTokens
	}
	return req.Model.MaxOutput
}

func extraOptions(req *llm.Request) []option.RequestOption {
	var opts []option.RequestOption
	for k, v := range req.Options {
		opts = append(opts, option.WithJSONSet(k, v))
	}
	return opts
}

func (c *Chat) params(req *llm.Request) (openai.ChatCompletionNewParams, []option.RequestOption, *llm.Error) {
	var p openai.ChatCompletionNewParams
	if req.Model.ID == "" {
		return p, nil, stream.Invalid("%s: request model has no id", c.name)
	}
	p.Model = shared.ChatModel(req.Model.ID)
	p.StreamOptions.IncludeUsage = openai.Bool(true)
	if n := maxTokens(req); n > 0 {
		if c.compat {
			p.MaxTokens = openai.Int(n)
		} else {
			p.MaxCompletionTokens = openai.Int(n)
		}
	}
	e, lerr := effort(c.name, req)
	if lerr != nil {
		return p, nil, lerr
	}
	p.ReasoningEffort = e
	if req.Temperature != nil && (c.compat || !req.Model.Reasoning) {
		// OpenAI's reasoning models refuse a temperature.
		p.Temperature = openai.Float(*req.Temperature)
	}
	if req.SystemPrompt != "" {
		if req.Model.Reasoning && !c.compat {
			p.Messages = append(p.Messages, openai.DeveloperMessage(req.SystemPrompt))
		} else {
			p.Messages = append(p.Messages, openai.SystemMessage(req.SystemPrompt))
		}
	}
	msgs, lerr := c.messages(req)
	if lerr != nil {
		return p, nil, lerr
	}
	p.Messages = append(p.Messages, msgs...)
	for i, t := range req.Tools {
		params, err := schema(t)
		if err != nil {
			return p, nil, stream.Invalid("%s: tools[%d] (%s): parameters: %v", c.name, i, t.Name, err)
		}
		fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: params}
		if t.Description != "" {
			fn.Description = openai.String(t.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionToolUnionParam{OfFunction: &openai.ChatCompletionFunctionToolParam{Function: fn}})
	}
	return p, extraOptions(req), nil
}

func schema(t events.ToolSpec) (map[string]any, error) {
	m := map[string]any{"type": "object", "properties": map[string]any{}}
	if len(t.Parameters) == 0 {
		return m, nil
	}
	err := json.Unmarshal(t.Parameters, &m)
	return m, err
}

func dataURL(b events.Block) string { return "data:" + b.MimeType + ";base64," + b.Data }

func (c *Chat) messages(req *llm.Request) ([]openai.ChatCompletionMessageParamUnion, *llm.Error) {
	var out []openai.ChatCompletionMessageParamUnion
	for i, m := range req.Messages {
		switch m.Role {
		case events.RoleUser:
			parts, err := userParts(c.name, i, m.Content.Blocks, openai.TextContentPart, chatImage)
			if err != nil {
				return nil, err
			}
			if len(parts) == 1 && parts[0].OfText != nil {
				out = append(out, openai.UserMessage(parts[0].OfText.Text))
			} else if len(parts) > 0 {
				out = append(out, openai.UserMessage(parts))
			}
		case events.RoleAssistant:
			var text []string
			var calls []openai.ChatCompletionMessageToolCallUnionParam
			for _, b := range m.Content.Blocks {
				switch b.Type {
				case events.BlockText:
					if b.Text != "" {
						text = append(text, b.Text)
					}
				case events.BlockToolCall:
					calls = append(calls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID: chatID(b.ID), Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: b.Name, Arguments: toolArgs(b)}}})
				}
				// Thinking is not sent back: Chat Completions has no field
				// for it.
			}
			if len(text) == 0 && len(calls) == 0 {
				continue
			}
			a := openai.ChatCompletionAssistantMessageParam{ToolCalls: calls}
			if len(text) > 0 {
				a.Content.OfString = openai.String(strings.Join(text, "\n"))
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case events.RoleToolResult:
			body, images, err := resultParts(c.name, i, m, chatImage)
			if err != nil {
				return nil, err
			}
			out = append(out, openai.ToolMessage(body, chatID(m.ToolCallID)))
			// A tool message carries only text: images follow as a user
			// message.
			if len(images) > 0 {
				out = append(out, openai.UserMessage(imagesFrom(m, images, openai.TextContentPart)))
			}
		default:
			return nil, stream.Invalid("%s: messages[%d]: role %q cannot be sent to a model (want user, assistant or toolResult)", c.name, i, m.Role)
		}
	}
	return out, nil
}

func chatImage(b events.Block) openai.ChatCompletionContentPartUnionParam {
	return openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: dataURL(b)})
}
