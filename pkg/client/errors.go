package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Sentinel errors. Match them with errors.Is; an [*Error] from the gateway
// matches the one its status stands for, and the client's own checks of
// what it is given (a malformed session id, a bad option) wrap ErrInvalid.
var (
	// ErrInvalid: the request was refused as malformed (400, or the client
	// refused to send it). The message names the field.
	ErrInvalid = errors.New("cairn: invalid request")
	// ErrNotFound: no such session, entry, command or route (404).
	ErrNotFound = errors.New("cairn: not found")
	// ErrRejected: the platform refused the request (409): the orchestrator
	// rejected a command sent with [WaitApplied] (Error.Reason says why, such
	// as "busy"), or an import names a session that exists.
	ErrRejected = errors.New("cairn: rejected")
	// ErrTooLarge: the request body is over the gateway's limit (413).
	ErrTooLarge = errors.New("cairn: request too large")
	// ErrCorrupt: the stored log of the session does not decode, or a blob
	// does not match its digest (422 corrupt).
	ErrCorrupt = errors.New("cairn: corrupt log")
	// ErrUnavailable: a part of the platform the request needs is not
	// reachable now (503); trying again later may succeed.
	ErrUnavailable = errors.New("cairn: unavailable")
	// ErrTimeout: the gateway stopped waiting (504). For a command sent with
	// [WaitApplied] it is stored and will still be applied.
	ErrTimeout = errors.New("cairn: timed out")
	// ErrBudgetExceeded: the session's tenant is over its budget (429
	// budget_exceeded): a prompt, steer or follow-up refused before it was
	// stored, or refused by the orchestrator under [WaitApplied]. The
	// message names the limit.
	ErrBudgetExceeded = errors.New("cairn: budget exceeded")
	// ErrUnauthenticated: the gateway refused the credentials (401): none
	// were sent, or the token is malformed, unknown, revoked or expired.
	ErrUnauthenticated = errors.New("cairn: unauthenticated")
	// ErrForbidden: the principal's role may not do this (403).
	ErrForbidden = errors.New("cairn: forbidden")
	// ErrClosed: the event stream was closed by its Close method.
	ErrClosed = errors.New("cairn: event stream closed")
)

// Error is an error the gateway answered with: its HTTP status and the body
// {"error": {"code", "message"}}. Use errors.As to read it, errors.Is with
// the sentinels to branch on it.
type Error struct {
	// Status is the HTTP status, such as 404.
	Status int
	// Code is the API's error code, such as "not_found", "invalid_request",
	// "invalid_parameter", "rejected", "corrupt".
	Code string
	// Message is the gateway's sentence; for a 400 it names the field.
	Message string
	// Field is the request field the error is about, when the gateway's
	// error body names it (error.field).
	Field string
	// Reason is, for a command the orchestrator rejected (409 under
	// WaitApplied, 429 over budget), the rejection's code, such as "busy".
	Reason string
	// CommandID is the rejected command's id (409 under WaitApplied).
	CommandID string
	// Method and Path are the request's, such as "GET" and
	// "/v1/sessions/s1".
	Method, Path string
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	if e.Code == "" {
		return fmt.Sprintf("%s (%d)", msg, e.Status)
	}
	return fmt.Sprintf("%s (%d %s)", msg, e.Status, e.Code)
}

// Is reports whether target is the sentinel e's status stands for.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrInvalid:
		return e.Status == http.StatusBadRequest
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrRejected:
		return e.Status == http.StatusConflict
	case ErrTooLarge:
		return e.Status == http.StatusRequestEntityTooLarge
	case ErrCorrupt:
		return e.Code == "corrupt"
	case ErrUnavailable:
		return e.Status == http.StatusServiceUnavailable
	case ErrTimeout:
		return e.Status == http.StatusGatewayTimeout
	case ErrBudgetExceeded:
		return e.Status == http.StatusTooManyRequests && e.Code == "budget_exceeded"
	case ErrUnauthenticated:
		return e.Status == http.StatusUnauthorized
	case ErrForbidden:
		return e.Status == http.StatusForbidden
	}
	return false
}

// decodeError reads an error answer. A body that is not the API's error
// form (a proxy's page) keeps its first line as the message.
func decodeError(method, path string, status int, body []byte) *Error {
	e := &Error{Status: status, Method: method, Path: path}
	var wire struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Field   string `json:"field"`
		} `json:"error"`
		Reason    string `json:"reason"`
		CommandID string `json:"commandId"`
	}
	if json.Unmarshal(body, &wire) == nil && wire.Error.Message != "" {
		e.Code, e.Message, e.Field = wire.Error.Code, wire.Error.Message, wire.Error.Field
		e.Reason, e.CommandID = wire.Reason, wire.CommandID
		return e
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(body)), "\n")
	if len(first) > 200 {
		first = first[:200] + "…"
	}
	e.Message = first
	return e
}
