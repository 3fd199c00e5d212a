package telemetry

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
)

// Span names: one trace per prompt, prompt → turn → llm request and tool
// call; session appends under whatever span writes them.
const (
	SpanPrompt  = "cairn.agent.prompt"
	SpanTurn    = "cairn.agent.turn"
	SpanLLM     = "cairn.llm.request"
	SpanTool    = "cairn.tool.call"
	SpanToolRun = "cairn.tool.execute" // the toolrunner's side of a tool call
	SpanAppend  = "cairn.session.append"
	SpanCompact = "cairn.compaction"
)

// Attribute keys. LLM attributes follow the OpenTelemetry GenAI conventions.
const (
	AttrSession      = "cairn.session.id"
	AttrTurn         = "cairn.turn"
	AttrTool         = "cairn.tool.name"
	AttrToolCall     = "cairn.tool.call_id"
	AttrToolPool     = "cairn.tool.pool"
	AttrStatus       = "cairn.status"
	AttrEntryType    = "cairn.entry.type"
	AttrEntrySeq     = "cairn.entry.seq"
	AttrProvider     = "gen_ai.provider.name"
	AttrModel        = "gen_ai.request.model"
	AttrStopReason   = "gen_ai.response.finish_reason"
	AttrInputTokens  = "gen_ai.usage.input_tokens"
	AttrOutputTokens = "gen_ai.usage.output_tokens"
	AttrCacheRead    = "gen_ai.usage.cache_read_tokens"
	AttrCacheWrite   = "gen_ai.usage.cache_write_tokens"
	AttrCost         = "cairn.cost.usd"
	AttrWorker       = "cairn.worker"

	// Content attributes, set only when content export is on.
	AttrPrompt     = "cairn.content.prompt"
	AttrCompletion = "cairn.content.completion"
	AttrToolArgs   = "cairn.content.tool_arguments"
	AttrToolResult = "cairn.content.tool_result"
)

// Status values of [AttrStatus].
const (
	StatusOK    = "ok"
	StatusError = "error"
)

// ScopeName is the instrumentation scope of every Cairn span.
const ScopeName = "github.com/cairn-agents/cairn"

// Tracer returns Cairn's tracer from the global provider (a no-op until
// [Setup] installs one).
func Tracer() trace.Tracer { return otel.Tracer(ScopeName) }
