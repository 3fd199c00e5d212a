// Package tool defines what a tool is to Cairn: a [Spec] the model sees and an
// Execute method the platform calls. The same interface is implemented by
// built-in tools running in process and by the remote executor that sends
// calls to toolrunner workers over NATS.
//
// # Errors
//
// A tool reports failure in one of two ways, and both reach the model as an
// error result, never as a crash of the loop: an error returned by Execute
// (its text becomes the result), or a Result with IsError set (when the tool
// wants to shape the error content itself).
//
// # Concurrency
//
// Execute may be called concurrently for different calls; a tool whose calls
// must not overlap within a batch declares [events.Sequential] in its spec.
// onUpdate may be called from any goroutine until Execute returns; updates
// after that are dropped by the caller.
//
// # Cancellation
//
// Cancelling ctx asks the tool to stop; Execute returns promptly with ctx's
// error or a result describing what was done.
package tool

import (
	"context"
	"encoding/json"

	"github.com/cairn-agents/cairn/pkg/events"
)

// Tool is one executable tool.
type Tool interface {
	Spec() events.ToolSpec
	Execute(ctx context.Context, call Call, onUpdate func(Result)) (Result, error)
}

// Call is one invocation of a tool, its arguments already validated against
// the spec's JSON schema.
type Call struct {
	ID        string          // tool call id from the model
	Name      string          // tool name
	Arguments json.RawMessage // a JSON object
	SessionID string
	// Tenant is the session's tenant ("" means events.DefaultTenant).
	Tenant string
	// Workspace is the absolute directory the call is confined to.
	Workspace string
}

// Result is what a tool call produced.
type Result struct {
	Content []events.Block  // text and image blocks
	Details json.RawMessage // structured data for clients, not sent to the model
	IsError bool
	// Terminate asks the loop to stop after this batch; it stops only when
	// every result of the batch asks.
	Terminate bool
}

// Text returns a result made of one text block.
func Text(s string) Result { return Result{Content: []events.Block{events.TextBlock(s)}} }

// Error returns an error result made of one text block.
func Error(s string) Result {
	return Result{Content: []events.Block{events.TextBlock(s)}, IsError: true}
}
