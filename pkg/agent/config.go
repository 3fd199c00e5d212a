package agent

import (
	"context"
	"encoding/json"

	"github.com/cairn-agents/cairn/pkg/agent/hook"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// Context is what the loop sends to the model. Run appends to Messages.
type Context struct {
	SystemPrompt string
	Messages     []events.Message
	Tools        []tool.Tool
}

// StreamOptions are the request fields besides model, prompt and tools.
type StreamOptions struct {
	MaxTokens   int64 // 0 = the model's MaxOutput
	Temperature *float64
	Options     map[string]json.RawMessage // provider-specific
}

// Sink receives the loop's events. Calls never overlap.
type Sink func(events.Event)

// Config is one run's configuration. Provider and Model are required.
type Config struct {
	Provider      llm.Provider
	Model         llm.Model
	ThinkingLevel string
	Stream        StreamOptions

	Hooks     *hook.Registry  // nil = no hooks
	Validator *tool.Validator // nil = a private one
	Sink      Sink            // nil = events dropped

	// SessionID and Workspace are passed to every tool call.
	SessionID string
	Workspace string

	// Steering returns the steering messages to inject before the next
	// model call (nil = none). FollowUp returns the messages that start the
	// loop again when it would stop.
	Steering func() []events.Message
	FollowUp func() []events.Message

	// SavePoint is called after each turn_end; what it returns applies to
	// the next model call. The harness flushes its held writes here.
	SavePoint func(ctx context.Context, t Turn) NextTurn

	// Recover is called when a model call fails with an error (not when it
	// is aborted); nil = the run ends.
	Recover func(ctx context.Context, f Failure) Recovery

	// Approval says whether a call waits for a person's answer before it
	// runs (DESIGN §11): asked for each call that found its tool, whose
	// arguments are valid and that no tool_call hook blocked, with the
	// hooks' reduced approval ("", "allow" or "ask"), and the run's context
	// (a decision that must wait, for a policy it cannot read yet, ends
	// with it). nil = no call waits.
	Approval func(ctx context.Context, toolName, hookApproval string) bool
	// Parked hears of each call Approval parks, before the batch's other
	// calls start. The run then ends with a *ParkedError (approval.go).
	Parked func(ctx context.Context, c ParkedCall)
	// Deferred says whether a call's result comes from outside the run (a
	// sub-agent's task, DESIGN §13), asked after Approval said no: true
	// parks the call as Approval does (Parked hears of it with Kind
	// ParkTask); a non-empty refusal ends the call with that error result
	// instead. n counts the batch's calls Deferred parked before this one
	// (its fan-out so far). nil = no call is deferred.
	Deferred func(ctx context.Context, c ParkedCall, n int) (deferred bool, refusal string)

	// Convert turns the context into the messages a provider takes; nil =
	// [ToLLM].
	Convert func([]events.Message) []events.Message
}

// Turn is what a finished turn produced.
type Turn struct {
	Message     events.Message   // the assistant reply
	ToolResults []events.Message // in call order
	Context     *Context
}

// NextTurn changes what the next model call uses; zero fields keep the
// current value.
type NextTurn struct {
	Stop          bool // end the run after this turn
	Messages      []events.Message
	Provider      llm.Provider
	Model         *llm.Model
	ThinkingLevel *string
	SystemPrompt  *string
	Tools         []tool.Tool
	SetTools      bool // Tools applies even when empty
	Stream        *StreamOptions
}

// Failure describes a failed model call.
type Failure struct {
	Err     error          // classified by the provider (llm.KindOf)
	Attempt int            // consecutive failed calls, this one included
	Message events.Message // the error assistant message already recorded
}

// Recovery is the answer to a Failure.
type Recovery struct {
	Retry    bool             // call the model again
	Messages []events.Message // replaces the context first (after a compaction)
	Err      error            // when not retrying: the error that ends the run (nil = the failure's)
	// Record, with Err: the run ends with an assistant message of its own
	// (stop reason error, ErrorMessage = Err's text) after the failed
	// one, so the log, the events and whoever reads the run's last message
	// see why the run stopped, not only the provider's error.
	Record bool
}

// ArgumentPreparer is an optional power of a tool: it rewrites raw
// arguments before validation (e.g. to accept an older argument shape).
type ArgumentPreparer interface {
	PrepareArguments(args json.RawMessage) (json.RawMessage, error)
}
