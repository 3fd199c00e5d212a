package anthropic

import (
	"encoding/json"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/internal/stream"
)

// buildParams turns a Cairn request into Messages API parameters, plus one
// request option per provider-specific field of req.Options.
func buildParams(req *llm.Request) (sdk.MessageNewParams, []option.RequestOption, *llm.Error) {
	var p sdk.MessageNewParams
	if req.Model.ID == "" {
		return p, nil, stream.Invalid("anthropic: request model has no id")
	}
	p.Model = sdk.Model(req.Model.ID)
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = req.Model.MaxOutput
	}
	if maxTokens <= 0 {
		maxTokens = 4096
	}
	p.MaxTokens = maxTokens

	if req.SystemPrompt != "" {
		p.System = []sdk.TextBlockParam{{Text: req.SystemPrompt, CacheControl: sdk.NewCacheControlEphemeralParam()}}
	}
	msgs, err := convertMessages(req.Model, req.Messages)
	if err != nil {
		return p, nil, err
	}
	p.Messages = msgs
	for i, t := range req.Tools {
		tool, err := convertTool(t)
		if err != nil {
			return p, nil, stream.Invalid("anthropic: tools[%d] (%s): %v", i, t.Name, err)
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: &tool})
	}
	if err := setThinking(&p, req); err != nil {
		return p, nil, err
	}
	var opts []option.RequestOption
	if req.Temperature != nil && p.Thinking.OfEnabled == nil && p.Thinking.OfAdaptive == nil {
		// The SDK's parameters have no temperature field; the API still
		// takes it (thinking does not).
		opts = append(opts, option.WithJSONSet("temperature", *req.Temperature))
	}
	for k, v := range req.Options {
		opts = append(opts, option.WithJSONSet(k, v))
	}
	return p, opts, nil
}

// Thinking budgets for models that take a token budget.
var budgets = map[string]int64{"minimal": 1024, "low": 4096, "medium": 10240, "high": 20480, "xhigh": 32768}

// Efforts for models with adaptive thinking.
var efforts = map[string]sdk.OutputConfigEffort{"minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh"}

func setThinking(p *sdk.MessageNewParams, req *llm.Request) *llm.Error {
	level := req.ThinkingLevel
	if level == "" || level == "off" {
		return nil
	}
	budget, ok := budgets[level]
	if !ok {
		return stream.Invalid("anthropic: thinking level %q: want off, minimal, low, medium, high or xhigh", level)
	}
	if !req.Model.Reasoning {
		return nil // the model does not think; the level is moot
	}
	if adaptive(req.Model.ID) {
		p.Thinking = sdk.ThinkingConfigParamUnion{OfAdaptive: &sdk.ThinkingConfigAdaptiveParam{Display: sdk.ThinkingConfigAdaptiveDisplaySummarized}}
		p.OutputConfig = sdk.OutputConfigParam{Effort: efforts[level]}
		return nil
	}
	// max_tokens must exceed the budget: grow it within the model's limit,
	// else shrink the budget.
	if limit := req.Model.MaxOutput; limit > 0 {
		p.MaxTokens = min(p.MaxTokens+budget, limit)
	} else {
		p.MaxTokens += budget
	}
	if p.MaxTokens <= budget {
		budget = max(1024, p.MaxTokens-1024)
		if p.MaxTokens <= budget {
			return nil // too little room to think at all
		}
	}
	p.Thinking = sdk.ThinkingConfigParamUnion{OfEnabled: &sdk.ThinkingConfigEnabledParam{BudgetTokens: budget}}
	return nil
}

// adaptive reports whether the model takes adaptive thinking with an effort
// instead of a token budget: the Claude 4.6 generation and later.
func adaptive(id string) bool {
	for _, old := range []string{"claude-3", "claude-opus-4-0", "claude-opus-4-1", "claude-opus-4-5", "claude-sonnet-4-0", "claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-2", "claude-sonnet-4-2"} {
		if strings.HasPrefix(id, old) {
			return false
		}
	}
	return id != "claude-opus-4" && id != "claude-sonnet-4" && !strings.HasPrefix(id, "claude-sonnet-4-2025") && !strings.HasPrefix(id, "claude-opus-4-2025")
}

func convertTool(t events.ToolSpec) (sdk.ToolParam, error) {
	tool := sdk.ToolParam{Name: t.Name}
	if t.Description != "" {
		tool.Description = sdk.String(t.Description)
	}
	schema := map[string]any{}
	if len(t.Parameters) > 0 {
		if err := json.Unmarshal(t.Parameters, &schema); err != nil {
			return tool, err
		}
	}
	tool.InputSchema.Properties = schema["properties"]
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				tool.InputSchema.Required = append(tool.InputSchema.Required, s)
			}
		}
	}
	delete(schema, "properties")
	delete(schema, "required")
	delete(schema, "type")
	if len(schema) > 0 {
		tool.InputSchema.ExtraFields = schema
	}
	return tool, nil
}

// convertMessages maps Cairn messages to Anthropic's alternating turns.
// Consecutive tool results travel in one user turn, as the API requires;
// thinking from another model is sent as text (its signature would not
// verify); the last block of the last turn gets a cache breakpoint.
func convertMessages(model llm.Model, in []events.Message) ([]sdk.MessageParam, *llm.Error) {
	var out []sdk.MessageParam
	for i, m := range in {
		switch m.Role {
		case events.RoleUser:
			blocks, err := userBlocks(m.Content.Blocks)
			if err != nil {
				return nil, stream.Invalid("anthropic: messages[%d]: %v", i, err)
			}
			if len(blocks) == 0 {
				continue
			}
			out = append(out, sdk.NewUserMessage(blocks...))
		case events.RoleAssistant:
			blocks := assistantBlocks(model, m)
			if len(blocks) == 0 {
				continue
			}
			out = append(out, sdk.NewAssistantMessage(blocks...))
		case events.RoleToolResult:
			res, err := toolResult(m)
			if err != nil {
				return nil, stream.Invalid("anthropic: messages[%d]: %v", i, err)
			}
			if n := len(out); n > 0 && isToolResults(out[n-1]) {
				out[n-1].OfUser.Content = append(out[n-1].OfUser.Content, res)
			} else {
				out = append(out, sdk.NewUserMessage(res))
			}
		default:
			// Other roles (custom, summaries) reach the provider already
			// converted to user messages by the context reducer.
			return nil, stream.Invalid("anthropic: messages[%d]: role %q cannot be sent to a model (want user, assistant or toolResult)", i, m.Role)
		}
	}
	if n := len(out); n > 0 {
		cacheLast(&out[n-1])
	}
	return out, nil
}

func isToolResults(m sdk.MessageParam) bool {
	if m.OfUser == nil || len(m.OfUser.Content) == 0 {
		return false
	}
	for _, c := range m.OfUser.Content {
		if c.OfToolResult == nil {
			return false
		}
	}
	return true
}

func cacheLast(m *sdk.MessageParam) {
	var content []sdk.ContentBlockParamUnion
	switch {
	case m.OfUser != nil:
		content = m.OfUser.Content
	case m.OfAssistant != nil:
		content = m.OfAssistant.Content
	}
	if len(content) == 0 {
		return
	}
	c := &content[len(content)-1]
	cc := sdk.NewCacheControlEphemeralParam()
	switch {
	case c.OfText != nil:
		c.OfText.CacheControl = cc
	case c.OfImage != nil:
		c.OfImage.CacheControl = cc
	case c.OfToolResult != nil:
		c.OfToolResult.CacheControl = cc
	case c.OfToolUse != nil:
		c.OfToolUse.CacheControl = cc
	}
}

func userBlocks(in []events.Block) ([]sdk.ContentBlockParamUnion, error) {
	var out []sdk.ContentBlockParamUnion
	for j, b := range in {
		switch b.Type {
		case events.BlockText:
			if b.Text != "" {
				out = append(out, sdk.NewTextBlock(b.Text))
			}
		case events.BlockImage:
			if b.Data == "" {
				return nil, errNoImageData(j, b)
			}
			out = append(out, sdk.NewImageBlockBase64(b.MimeType, b.Data))
		default:
			return nil, errBlockType(j, b.Type)
		}
	}
	return out, nil
}

func assistantBlocks(model llm.Model, m events.Message) []sdk.ContentBlockParamUnion {
	sameModel := m.Provider == model.Provider && m.Model == model.ID && m.API == API
	var out []sdk.ContentBlockParamUnion
	for _, b := range m.Content.Blocks {
		switch b.Type {
		case events.BlockText:
			if b.Text != "" {
				out = append(out, sdk.NewTextBlock(b.Text))
			}
		case events.BlockThinking:
			switch {
			case sameModel && b.Redacted && b.ThinkingSignature != "":
				out = append(out, sdk.NewRedactedThinkingBlock(b.ThinkingSignature))
			case sameModel && b.ThinkingSignature != "":
				out = append(out, sdk.NewThinkingBlock(b.ThinkingSignature, b.Thinking))
			case b.Thinking != "" && !b.Redacted:
				out = append(out, sdk.NewTextBlock(b.Thinking))
			}
		case events.BlockToolCall:
			args := b.Arguments
			if len(args) == 0 || !json.Valid(args) {
				args = json.RawMessage("{}") // the request would not encode
			}
			out = append(out, sdk.NewToolUseBlock(toolID(b.ID), args, b.Name))
		}
	}
	return out
}

func toolResult(m events.Message) (sdk.ContentBlockParamUnion, error) {
	res := sdk.ToolResultBlockParam{ToolUseID: toolID(m.ToolCallID)}
	if m.IsError {
		res.IsError = sdk.Bool(true)
	}
	for j, b := range m.Content.Blocks {
		switch b.Type {
		case events.BlockText:
			res.Content = append(res.Content, sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: b.Text}})
		case events.BlockImage:
			if b.Data == "" {
				return sdk.ContentBlockParamUnion{}, errNoImageData(j, b)
			}
			img := sdk.NewImageBlockBase64(b.MimeType, b.Data).OfImage
			res.Content = append(res.Content, sdk.ToolResultBlockParamContentUnion{OfImage: img})
		default:
			return sdk.ContentBlockParamUnion{}, errBlockType(j, b.Type)
		}
	}
	return sdk.ContentBlockParamUnion{OfToolResult: &res}, nil
}

func errNoImageData(j int, b events.Block) error {
	return &blockErr{j, "image has no inline data (blob " + b.Blob + " must be resolved before the call)"}
}

func errBlockType(j int, typ string) error {
	return &blockErr{j, "block type " + typ + " cannot be sent in this message"}
}

type blockErr struct {
	index   int
	problem string
}

func (e *blockErr) Error() string { return "content[" + itoa(e.index) + "]: " + e.problem }

// toolID makes a tool-call id from another provider acceptable to Anthropic
// (letters, digits, '_' and '-', at most 64): OpenAI's Responses ids hold a
// '|'. A call and its result map the same way, so they still match.
func toolID(id string) string {
	b := []byte(id)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	return string(b)
}
