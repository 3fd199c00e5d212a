package harness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cairn-agents/cairn/pkg/agent"
	"github.com/cairn-agents/cairn/pkg/agent/hook"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// QueueMode says how many queued messages a turn takes.
type QueueMode int

const (
	OneAtATime QueueMode = iota // the default: one message per turn
	All                         // every queued message at once
)

// Config is what the process supplies to a harness. Session, Providers
// and Model are required.
type Config struct {
	SessionID string
	Workspace string // passed to every tool call
	Session   Session
	// Providers by provider name (llm.Model.Provider).
	Providers map[string]llm.Provider
	// Model is the model of a session whose context names none (neither
	// its header, nor a model_change, nor an assistant message), or names
	// one Models cannot resolve.
	Model llm.Model
	// Models resolves the provider/model reference of the session's
	// context; nil or not found keeps Model.
	Models func(ref string) (llm.Model, bool)

	// SystemPrompt is the system prompt of a session whose header has
	// none. The thinking level and the active tools are the context's
	// (package sessiontree): the header's, then the log's changes.
	SystemPrompt string
	// SystemPromptFor, when set, builds the system prompt at the start of
	// every run and at every save point from the active tools' names then;
	// what it returns replaces SystemPrompt (and SetSystemPrompt's) from
	// that model call on. It is called on the run's goroutine and must not
	// block on the harness. With it the harness records the prompt each
	// model call is sent with (events.CustomSystemPrompt; record.go).
	SystemPromptFor func(activeTools []string) SystemPrompt
	// Tools the agent may call. The context's active tools (the header's
	// tools, then the last active_tools_change) narrow them to the names
	// they list.
	Tools  []tool.Tool
	Stream agent.StreamOptions

	// Hooks is this harness's registry (it becomes the registry's
	// hook_error reporter, so do not share one between harnesses); nil = a
	// new, empty one (see Harness.Hooks).
	Hooks *hook.Registry
	// Sink receives every event (loop and harness), one at a time.
	Sink func(events.Event)

	SteeringMode QueueMode
	FollowUpMode QueueMode
	Retry        RetryPolicy
	// Compactor summarizes history; nil = no compaction (an overflow then
	// ends the run).
	Compactor Compactor
	// ReserveTokens is the room kept free in the model's context window:
	// when a reply's usage says the context has grown past window minus
	// reserve, the harness compacts at the save point (reason threshold).
	// 0 = 16384; negative = never compact on a threshold.
	ReserveTokens int64
	// Summarizer summarizes the branch left by a navigation; nil = no
	// branch summaries.
	Summarizer Summarizer
	// Validator checks tool arguments, compiling each schema once; one may
	// be shared by every harness of a process (it is safe for concurrent
	// use). nil = a private one.
	Validator *tool.Validator
	Logger    *slog.Logger // nil = discard

	// Approval says whether a tool call waits for a person's answer
	// (agent.Config.Approval; approval.go); nil = no call waits.
	// ApprovalExpiresAt gives a new request its expiry ("" = none).
	Approval          func(ctx context.Context, toolName, hookApproval string) bool
	ApprovalExpiresAt func(ctx context.Context) string
	// Deferred says whether a tool call's result comes from outside the
	// run, a sub-agent's (agent.Config.Deferred; approval.go): such a call
	// gets a task_started entry naming its child session
	// (events.ChildSessionID) and parks its batch as an approval does. nil
	// = no call is deferred.
	Deferred func(ctx context.Context, c agent.ParkedCall, n int) (deferred bool, refusal string)
}

// RetryPolicy is the automatic retry of transient provider failures.
type RetryPolicy struct {
	MaxRetries int           // 0 = 3; negative = never retry
	BaseDelay  time.Duration // 0 = 2 s; doubles with each retry
}

func (p RetryPolicy) max() int {
	switch {
	case p.MaxRetries < 0:
		return 0
	case p.MaxRetries == 0:
		return 3
	}
	return p.MaxRetries
}

func (p RetryPolicy) delay(attempt int, err error) time.Duration {
	base := p.BaseDelay
	if base <= 0 {
		base = 2 * time.Second
	}
	d := base << (attempt - 1)
	var le *llm.Error
	if errors.As(err, &le) && le.RetryAfter > d {
		d = le.RetryAfter
	}
	return d
}

// CompactRequest is what a compactor works from.
type CompactRequest struct {
	Reason       string // manual | overflow | threshold
	Instructions string
	Path         []events.Entry // root to leaf
	Model        llm.Model
}

// Compaction is a compactor's result, appended as a compaction entry.
type Compaction struct {
	Summary          string
	FirstKeptEntryID string
	TokensBefore     int64
	Details          []byte // JSON, optional
}

// Compactor summarizes the history of a path (the compactor service, or an
// in-process function).
type Compactor func(ctx context.Context, req CompactRequest) (Compaction, error)

// SummaryRequest is what a branch summarizer works from.
type SummaryRequest struct {
	Branch       []events.Entry // the entries being left, root to old leaf
	TargetID     *string
	Instructions string
}

// Summarizer summarizes the branch a navigation leaves.
type Summarizer func(ctx context.Context, req SummaryRequest) (string, error)

// Sentinel errors.
var (
	ErrBusy      = errors.New("busy: the session is running an operation")
	ErrCancelled = errors.New("cancelled by a hook")
	// ErrOverflowRecovery: a context overflow could not be recovered from
	// (nothing to compact, no compactor, the compaction failed or was
	// cancelled). The error also matches the cause.
	ErrOverflowRecovery = errors.New("context overflow recovery failed")
	// ErrOverflow: the context still overflowed after its one
	// compact-and-retry (pi's wording).
	ErrOverflow    = errors.New("context overflow recovery failed after one compact-and-retry attempt")
	ErrNoCompactor = errors.New("no compactor configured")
	ErrNoPrompt    = errors.New("harness: Prompt needs at least one message (or a queued next-turn message)")
	// ErrDuplicateTool: two tools of a tool set have the same name.
	ErrDuplicateTool = errors.New("duplicate tool name")
	// ErrNoEntry: a navigation target that is not in the session.
	ErrNoEntry = errors.New("no such entry in the session")
)

func (c *Config) validate() error {
	switch {
	case c.Session == nil:
		return errors.New("harness: Config.Session is required")
	case c.Model.ID == "" || c.Model.Provider == "":
		return errors.New("harness: Config.Model needs a provider and an id")
	}
	if _, ok := c.Providers[c.Model.Provider]; !ok {
		return fmt.Errorf("harness: Config.Providers has no provider %q for model %s", c.Model.Provider, c.Model.Ref())
	}
	if err := uniqueTools(c.Tools); err != nil {
		return fmt.Errorf("harness: Config.Tools: %w", err)
	}
	return nil
}

// uniqueTools refuses a tool set with two tools of one name, as pi does at
// construction and in its setters: the model could not tell them apart.
func uniqueTools(tools []tool.Tool) error {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Spec().Name
	}
	if err := events.UniqueToolNames("tools", names); err != nil {
		return fmt.Errorf("%w: %w", ErrDuplicateTool, err)
	}
	return nil
}
