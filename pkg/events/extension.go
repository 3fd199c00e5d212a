package events

import (
	"encoding/json"
	"time"
)

// Extensions over NATS (DESIGN §12, docs/extensions.md): an extension
// registers handlers in [Names.ExtensionsBucket], one key per handler,
// and answers each hook event as a NATS request on
// [Names.ExtensionCallSubject]; session lifecycle notices go out on
// [Names.ExtensionNoticeSubject], fire and forget.

// ExtensionsBucket is the KV bucket of extension handler registrations:
// key <handler>, value an [ExtensionRegistration]. Orchestrators watch it.
func (n Names) ExtensionsBucket() string { return n.p() + "_extensions" }

// ExtensionCallSubject is the request subject of handler's hook events:
// <prefix>.ext.call.<handler>. handler must be valid
// ([ValidateExtensionHandler]).
func (n Names) ExtensionCallSubject(handler string) string { return n.p() + ".ext.call." + handler }

// AllExtensionCalls covers every handler's request subject.
func (n Names) AllExtensionCalls() string { return n.p() + ".ext.call.*" }

// ExtensionNoticeSubject is where the lifecycle notice kind of session r
// goes: <prefix>.ext.notice.<tenant>.<sid>.<kind>, so a subscriber (or a
// NATS permission) can pick a tenant, a session or a kind.
func (n Names) ExtensionNoticeSubject(r SessionRef, kind string) string {
	return n.p() + ".ext.notice." + r.String() + "." + kind
}

// AllExtensionNotices covers every notice of every session.
func (n Names) AllExtensionNotices() string { return n.p() + ".ext.notice.>" }

// TenantExtensionNotices covers the notices of tenant's sessions.
func (n Names) TenantExtensionNotices(tenant string) string {
	return n.p() + ".ext.notice." + tenant + ".>"
}

// HeaderExtensionError on a reply marks it as the handler's failure; its
// value is the reason. The orchestrator treats it as the handler's policy
// says (fail open or closed), like a time-out.
const HeaderExtensionError = "Cairn-Extension-Error"

// Failure policies of a handler.
const (
	FailOpen   = "open"   // a failure counts as no opinion
	FailClosed = "closed" // a failure is the handler's error (a tool_call is blocked)
)

// Lifecycle notice kinds (pi's extension event names).
const (
	NoticeSessionStart         = "session_start"          // the session is loaded by an orchestrator
	NoticeSessionBeforeCompact = "session_before_compact" // a compaction starts
	NoticeSessionCompact       = "session_compact"        // a compaction ended (entryId, or error/aborted)
	NoticeSessionBeforeTree    = "session_before_tree"    // a navigation starts (targetId)
	NoticeSessionTree          = "session_tree"           // the leaf moved
	NoticeSessionShutdown      = "session_shutdown"       // the session left the orchestrator's memory
)

// Limits of a registration.
const (
	MaxExtensionTimeout  = time.Minute
	MaxExtensionPriority = 1_000_000
)

// ExtensionRegistration is one handler of an extension, the value of its
// key in [Names.ExtensionsBucket].
type ExtensionRegistration struct {
	// Handler names the handler: 1-64 characters of [A-Za-z0-9_-], the
	// bucket key and the last token of its request subject.
	Handler string `json:"handler"`
	// Hook is the hook it handles: tool_call, tool_result, context,
	// before_provider_request, before_agent_start, session_before_compact,
	// session_before_tree or next_turn.
	Hook string `json:"hook"`
	// Tenant limits the handler to that tenant's sessions; empty = all.
	Tenant string `json:"tenant,omitempty"`
	// Priority orders handlers of one hook: lower first, then by handler
	// name; in-process handlers have priority 0. -1e6..1e6.
	Priority int `json:"priority,omitempty"`
	// TimeoutMs bounds one call; 0 = 2000, at most 60000.
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
	// Failure is "open" or "closed" (default closed).
	Failure string `json:"failure,omitempty"`
}

// Validate reports the first problem of r, naming the field. Which hooks
// exist is the hook package's to say; Validate checks only the name's form.
func (r ExtensionRegistration) Validate() error {
	if err := ValidateExtensionHandler("handler", r.Handler); err != nil {
		return err
	}
	if err := validateID("hook", "hook name", r.Hook); err != nil {
		return err
	}
	if r.Tenant != "" {
		if err := ValidateTenant(r.Tenant); err != nil {
			return err
		}
	}
	if r.Priority < -MaxExtensionPriority || r.Priority > MaxExtensionPriority {
		return fieldErr("priority", "must be between %d and %d, got %d", -MaxExtensionPriority, MaxExtensionPriority, r.Priority)
	}
	if r.TimeoutMs < 0 || r.TimeoutMs > MaxExtensionTimeout.Milliseconds() {
		return fieldErr("timeoutMs", "must be 0 (the default, 2000) to %d, got %d", MaxExtensionTimeout.Milliseconds(), r.TimeoutMs)
	}
	switch r.Failure {
	case "", FailOpen, FailClosed:
	default:
		return fieldErr("failure", "%q: \"open\" or \"closed\" expected", r.Failure)
	}
	return nil
}

// ValidateExtensionHandler checks a handler name: 1-64 characters of
// [A-Za-z0-9_-].
func ValidateExtensionHandler(field, name string) error {
	return validateID(field, "handler name", name)
}

// DecodeExtensionRegistration decodes and validates a registration
// (unknown fields are ignored, for registrations of later versions).
func DecodeExtensionRegistration(data []byte) (ExtensionRegistration, error) {
	var r ExtensionRegistration
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fieldErr("", "registration is not JSON of a registration: %v", err)
	}
	return r, r.Validate()
}

// ExtensionRequest is the body of a hook request to a handler.
type ExtensionRequest struct {
	V         int    `json:"v"`
	Hook      string `json:"hook"`
	Handler   string `json:"handler"`
	Tenant    string `json:"tenant"`
	SessionID string `json:"sessionId"`
	// Event is the hook's event, as package hook encodes it.
	Event json.RawMessage `json:"event"`
}

// ExtensionNotice is the body of a lifecycle notice.
type ExtensionNotice struct {
	V         int             `json:"v"`
	Type      string          `json:"type"` // a Notice* kind
	Tenant    string          `json:"tenant"`
	SessionID string          `json:"sessionId"`
	Time      string          `json:"time"`
	Details   json.RawMessage `json:"details,omitempty"`
}
