package anthropic

import (
	"context"
	"errors"
	"net/http"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/internal/stream"
)

// stopReason maps Anthropic's stop reasons. A refusal ends the call with an
// error; an unknown reason (a newer API) counts as a normal stop.
func stopReason(r sdk.StopReason) (events.StopReason, *llm.Error) {
	switch r {
	case sdk.StopReasonEndTurn, sdk.StopReasonStopSequence, sdk.StopReasonPauseTurn:
		return events.StopEnd, nil
	case sdk.StopReasonToolUse:
		return events.StopToolUse, nil
	case sdk.StopReasonMaxTokens, sdk.StopReasonModelContextWindowExceeded:
		return events.StopLength, nil
	case sdk.StopReasonRefusal:
		return events.StopError, &llm.Error{Kind: llm.KindOther, Message: "the model declined to answer (stop reason refusal)"}
	}
	return events.StopEnd, nil
}

// typeStatus is the HTTP status Anthropic documents for each error type, used
// for error events that arrive inside a 200 stream.
var typeStatus = map[string]int{
	"invalid_request_error": 400,
	"authentication_error":  401,
	"billing_error":         402,
	"permission_error":      403,
	"not_found_error":       404,
	"request_too_large":     413,
	"rate_limit_error":      429,
	"api_error":             500,
	"timeout_error":         504,
	"overloaded_error":      529,
}

// classify turns what the SDK returned into one *llm.Error.
func classify(ctx context.Context, err error) *llm.Error {
	if ctx.Err() != nil {
		return stream.Aborted(ctx)
	}
	var aerr *sdk.Error
	if !errors.As(err, &aerr) {
		// A transport failure, a body cut mid-stream or an event that is
		// not JSON: the stream broke.
		return stream.Transport(ctx, "anthropic stream", err)
	}
	typ := string(aerr.Type())
	status := aerr.StatusCode
	if status < 400 { // an error event inside the stream
		status = typeStatus[typ]
		if status == 0 {
			status = 500
		}
	}
	msg := aerr.Message
	if msg == "" {
		msg = aerr.RawJSON()
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	var header http.Header
	if aerr.Response != nil {
		header = aerr.Response.Header
	}
	// Errors carry no key: the SDK error's own text (which names the URL)
	// is not kept, only the provider's message.
	return stream.HTTPError(status, typ, msg, header, nil)
}
