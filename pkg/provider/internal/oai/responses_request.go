package oai

import (
	"encoding/json"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/internal/stream"
)

func (r *Responses) params(req *llm.Request) (responses.ResponseNewParams, []option.RequestOption, *llm.Error) {
	var p responses.ResponseNewParams
	if req.Model.ID == "" {
		return p, nil, stream.Invalid("%s: request model has no id", r.name)
	}
	p.Model = shared.ResponsesModel(req.Model.ID)
	p.Store = openai.Bool(false)
	if n := maxTokens(req); n > 0 {
		p.MaxOutputTokens = openai.Int(n)
	}
	if req.SystemPrompt != "" {
		p.Instructions = openai.String(req.SystemPrompt)
	}
	if req.Temperature != nil && !req.Model.Reasoning {
		// Reasoning models refuse a temperature.
		p.Temperature = openai.Float(*req.Temperature)
	}
	e, lerr := effort(r.name, req)
	if lerr != nil {
		return p, nil, lerr
	}
	if e != "" {
		p.Reasoning = shared.ReasoningParam{Effort: e, Summary: shared.ReasoningSummaryAuto}
	}
	if req.Model.Reasoning {
		p.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
	}
	items, lerr := r.input(req)
	if lerr != nil {
		return p, nil, lerr
	}
	p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: items}
	for i, t := range req.Tools {
		params, err := schema(t)
		if err != nil {
			return p, nil, stream.Invalid("%s: tools[%d] (%s): parameters: %v", r.name, i, t.Name, err)
		}
		fn := responses.FunctionToolParam{Name: t.Name, Parameters: params, Strict: openai.Bool(false)}
		if t.Description != "" {
			fn.Description = openai.String(t.Description)
		}
		p.Tools = append(p.Tools, responses.ToolUnionParam{OfFunction: &fn})
	}
	return p, extraOptions(req), nil
}

func inputImage(b events.Block) responses.ResponseInputContentUnionParam {
	img := responses.ResponseInputContentParamOfInputImage(responses.ResponseInputImageDetailAuto)
	img.OfInputImage.ImageURL = openai.String(dataURL(b))
	return img
}

func (r *Responses) input(req *llm.Request) (responses.ResponseInputParam, *llm.Error) {
	var out responses.ResponseInputParam
	for i, m := range req.Messages {
		switch m.Role {
		case events.RoleUser:
			parts, err := userParts(r.name, i, m.Content.Blocks, responses.ResponseInputContentParamOfInputText, inputImage)
			if err != nil {
				return nil, err
			}
			if len(parts) > 0 {
				out = append(out, responses.ResponseInputItemParamOfMessage(responses.ResponseInputMessageContentListParam(parts), responses.EasyInputMessageRoleUser))
			}
		case events.RoleAssistant:
			sameModel := m.API == APIResponses && m.Provider == req.Model.Provider && m.Model == req.Model.ID
			for _, b := range m.Content.Blocks {
				switch b.Type {
				case events.BlockThinking:
					// Reasoning items verify only with the model that made
					// them; from elsewhere they are dropped.
					if sameModel && strings.HasPrefix(b.ThinkingSignature, "{") {
						item := param.Override[responses.ResponseReasoningItemParam](json.RawMessage(b.ThinkingSignature))
						out = append(out, responses.ResponseInputItemUnionParam{OfReasoning: &item})
					}
				case events.BlockText:
					switch {
					case b.Text == "":
					case sameModel && strings.HasPrefix(b.TextSignature, "msg_"):
						text := responses.ResponseOutputTextParam{Text: b.Text, Annotations: []responses.ResponseOutputTextAnnotationUnionParam{}}
						out = append(out, responses.ResponseInputItemParamOfOutputMessage(
							[]responses.ResponseOutputMessageContentUnionParam{{OfOutputText: &text}}, b.TextSignature, responses.ResponseOutputMessageStatusCompleted))
					default:
						out = append(out, responses.ResponseInputItemParamOfMessage(b.Text, responses.EasyInputMessageRoleAssistant))
					}
				case events.BlockToolCall:
					callID, itemID := splitID(b.ID)
					item := responses.ResponseInputItemParamOfFunctionCall(toolArgs(b), callID, b.Name)
					if sameModel && itemID != "" {
						item.OfFunctionCall.ID = openai.String(itemID)
					}
					out = append(out, item)
				}
			}
		case events.RoleToolResult:
			body, images, err := resultParts(r.name, i, m, inputImage)
			if err != nil {
				return nil, err
			}
			item := responses.ResponseInputItemParamOfFunctionCallOutput(body)
			callID, _ := splitID(m.ToolCallID)
			item.OfFunctionCallOutput.CallID = openai.String(callID)
			out = append(out, item)
			if len(images) > 0 {
				parts := responses.ResponseInputMessageContentListParam(imagesFrom(m, images, responses.ResponseInputContentParamOfInputText))
				out = append(out, responses.ResponseInputItemParamOfMessage(parts, responses.EasyInputMessageRoleUser))
			}
		default:
			return nil, stream.Invalid("%s: messages[%d]: role %q cannot be sent to a model (want user, assistant or toolResult)", r.name, i, m.Role)
		}
	}
	return out, nil
}
