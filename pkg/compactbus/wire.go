package compactbus

import (
	"encoding/json"
	"fmt"

	"github.com/cairn-agents/cairn/pkg/compaction"
	"github.com/cairn-agents/cairn/pkg/events"
)

// Version is the protocol's schema version.
const Version = 1

// KindCompaction is the kind of every request and result of the protocol;
// tool results have kind "tool".
const KindCompaction = "compaction"

// Request asks for one summary.
type Request struct {
	V         int    `json:"v"`
	Kind      string `json:"kind"`
	Tenant    string `json:"tenant,omitempty"` // the session's tenant; absent: events.DefaultTenant
	SessionID string `json:"sessionId"`
	// RequestID names the request; the same work must get the same id
	// (see [RequestID]).
	RequestID string `json:"requestId"`
	// Model is the provider/model reference that writes the summary.
	Model  string         `json:"model"`
	Reason string         `json:"reason,omitempty"` // manual | threshold | overflow | branch
	Job    compaction.Job `json:"job"`
}

// Result is a worker's answer to a request: a summary, or an error.
type Result struct {
	V         int                `json:"v"`
	Kind      string             `json:"kind"`
	Tenant    string             `json:"tenant,omitempty"`
	SessionID string             `json:"sessionId"`
	RequestID string             `json:"requestId"`
	Summary   compaction.Summary `json:"summary"`
	Error     string             `json:"error,omitempty"`
	Worker    string             `json:"worker,omitempty"`
}

// RequestID derives a request id from what determines the work: the
// session, the kind of summary and its inputs (e.g. the leaf entry id and
// the operator's instructions).
func RequestID(r events.SessionRef, parts ...string) string {
	return events.DeriveID(append([]string{"compact", r.String()}, parts...)...)
}

// Session is the session r summarises.
func (r Request) Session() events.SessionRef { return events.Ref(r.Tenant, r.SessionID) }

// Session is the session r answers.
func (r Result) Session() events.SessionRef { return events.Ref(r.Tenant, r.SessionID) }

func fieldErr(field, format string, args ...any) error {
	return &events.FieldError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

// Validate reports the first field of r that is wrong.
func (r *Request) Validate() error {
	if r.V != Version {
		return fieldErr("v", "must be %d, got %d", Version, r.V)
	}
	if r.Kind != KindCompaction {
		return fieldErr("kind", "must be %q, got %q", KindCompaction, r.Kind)
	}
	if r.Tenant != "" {
		if err := events.ValidateTenant(r.Tenant); err != nil {
			return err
		}
	}
	if err := events.ValidateSessionID(r.SessionID); err != nil {
		return fieldErr("sessionId", "%q is not a valid session id", r.SessionID)
	}
	if r.RequestID == "" {
		return fieldErr("requestId", "is required")
	}
	if err := events.ValidateModelRef("model", r.Model); err != nil {
		return err
	}
	if err := r.Job.Validate(); err != nil {
		return fmt.Errorf("job: %w", err)
	}
	return nil
}

// Encode validates r and returns its JSON.
func (r Request) Encode() ([]byte, error) {
	r.V, r.Kind = Version, KindCompaction
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(r)
}

// DecodeRequest decodes and validates a request.
func DecodeRequest(data []byte) (Request, error) {
	var r Request
	if err := json.Unmarshal(data, &r); err != nil {
		return Request{}, fmt.Errorf("compaction request: %w", err)
	}
	return r, r.Validate()
}

// Encode returns the JSON of r.
func (r Result) Encode() ([]byte, error) {
	r.V, r.Kind = Version, KindCompaction
	if r.RequestID == "" {
		return nil, fieldErr("requestId", "is required")
	}
	return json.Marshal(r)
}

// DecodeResult decodes a compaction result; anything else on the results
// subjects (a tool result) is an error naming its kind.
func DecodeResult(data []byte) (Result, error) {
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return Result{}, fmt.Errorf("compaction result: %w", err)
	}
	if r.Kind != KindCompaction {
		return Result{}, fieldErr("kind", "must be %q, got %q", KindCompaction, r.Kind)
	}
	if r.V != Version {
		return Result{}, fieldErr("v", "must be %d, got %d", Version, r.V)
	}
	if r.RequestID == "" {
		return Result{}, fieldErr("requestId", "is required")
	}
	return r, nil
}
