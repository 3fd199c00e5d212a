package sessiontree

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cairn-agents/cairn/pkg/events"
)

// DefaultThinkingLevel is the thinking level of a session that never set one
// (pi's default).
const DefaultThinkingLevel = "off"

// Context is what the model sees of one branch of a session: the result of
// [BuildContext].
type Context struct {
	// Messages to send, in order. They share content (blocks, details) with
	// the entries they come from: read, never write.
	Messages []events.Message

	// Model is the effective model as provider/model, "" when neither the
	// header nor the path names one.
	Model string

	// ThinkingLevel is the effective thinking level; DefaultThinkingLevel
	// when neither the header nor the path sets one.
	ThinkingLevel string

	// Tools are the active tool names; nil when neither the header nor the
	// path sets them (the harness's default applies), non-nil and possibly
	// empty once set. The slice is the caller's own.
	Tools []string

	// CompactionID is the id of the compaction that rules Messages (the last
	// one on the path), "" when there is none.
	CompactionID string

	// FirstKeptMissing reports that the ruling compaction's firstKeptEntryId
	// is not on the path before it: nothing from before the compaction is
	// kept, only its summary (pi does the same). A caller may log it; the
	// context is still usable.
	FirstKeptMissing bool
}

// ErrInvalidPath is matched (errors.Is) by every [*ContextError].
var ErrInvalidPath = errors.New("session: invalid context path")

// ContextError names the entry that makes a path unfit for [BuildContext].
type ContextError struct {
	Index   int    // position in the path; -1 for the header
	EntryID string //
	Problem string //
}

func (e *ContextError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("context: header %q: %s", e.EntryID, e.Problem)
	}
	return fmt.Sprintf("context: path entry %d (%q): %s", e.Index, e.EntryID, e.Problem)
}

// Is makes errors.Is(err, ErrInvalidPath) true.
func (e *ContextError) Is(target error) bool { return target == ErrInvalidPath }

func pathErr(i int, id, format string, args ...any) error {
	return &ContextError{Index: i, EntryID: id, Problem: fmt.Sprintf(format, args...)}
}

// BuildContext is the context reducer: what a model is sent from a branch of
// a session, and what `/context` shows. It is pure: no I/O, no clock, the
// same input always gives the same output.
//
// header is the session's `session` entry (nil when unknown); path is the
// branch from a root down to the leaf, in that order, as [Index.Path]
// returns it: path[0] has no parent and each entry's parent is the one
// before it. An empty path (a leaf before the first entry) gives no
// messages, with the header's settings.
//
// Settings are replayed over the whole path, compacted or not, so a change
// made before a compaction stays in effect after it:
//   - model: the header's Model, then every model_change (provider/modelId)
//     and every assistant message that names its provider and model (pi);
//   - thinking level: the header's ThinkingLevel, then thinking_level_change;
//     [DefaultThinkingLevel] when neither sets one (pi);
//   - tools: the header's Tools, then active_tools_change (a replacement).
//
// Messages: without a compaction on the path, every entry contributes in
// order. With compactions, the last one rules: its summary comes first (a
// compactionSummary message), then the entries from its firstKeptEntryId up
// to it, then the entries after it. What an entry contributes:
//   - message: its message, whatever its role (a bashExecution with
//     excludeFromContext too: the conversion to provider messages leaves it
//     out, as pi's convertToLlm does);
//   - custom_message: a custom message (customType, content, display, details);
//   - branch_summary with a summary: a branchSummary message (pi sends no
//     empty one);
//   - turn_interrupted: for each tool call of the last assistant message
//     before it that has no result yet, a toolResult with isError set that
//     says the call was interrupted, so every call has its result;
//   - everything else (compaction, model/thinking/tools changes, custom,
//     label, leaf, session_info, command_rejected, unknown types): nothing.
//
// Summary, custom and synthetic messages take their timestamp from their
// entry (Unix milliseconds). Errors are [*ContextError]s naming the entry.
func BuildContext(header *events.Entry, path []events.Entry) (Context, error) {
	ctx, _, err := build(header, path, false)
	return ctx, err
}

// Part is what one entry of a path contributes to its context.
type Part struct {
	// Index is the entry's position in the path.
	Index int
	// Messages are its messages, shared with [Context.Messages]: none (a
	// settings change, a label...), one, or the results a turn_interrupted
	// makes up. The ruling compaction's part holds its summary.
	Messages []events.Message
}

// BuildParts is [BuildContext] entry by entry, for code that cuts a context
// at an entry (compaction): it also returns one [Part] for every entry the
// messages are built from, in context order — the ruling compaction first
// (its summary), then the entries from its firstKeptEntryId up to it, then
// those after it; every entry of the path without a compaction. Parts with
// no message are included. Their messages, concatenated, are the context's
// messages.
func BuildParts(header *events.Entry, path []events.Entry) (Context, []Part, error) {
	return build(header, path, true)
}

// Messages returns what a run of entries contributes, each entry as it
// would on a path, in order, with no compaction rule (a compaction entry
// contributes nothing) and no check that the run starts at a root: the
// messages of a branch a navigation leaves. Errors are [*ContextError]s.
func Messages(entries []events.Entry) ([]events.Message, error) {
	r := reducer{msgs: make([]events.Message, 0, len(entries))}
	r.pending = r.pendingBuf[:0]
	for i := range entries {
		e := &entries[i]
		if e.Type == events.EntryMessage && e.Message == nil {
			return nil, pathErr(i, e.ID, "is a message entry without a message")
		}
		if err := r.add(i, e); err != nil {
			return nil, err
		}
	}
	return r.msgs, nil
}

func build(header *events.Entry, path []events.Entry, withParts bool) (Context, []Part, error) {
	var ctx Context
	if err := checkPath(header, path); err != nil {
		return ctx, nil, err
	}

	// Pass 1: settings, and the ruling compaction.
	var (
		modelRef          string // provider/model from the header
		provider, modelID string // from the last model_change or assistant message
		thinking          = DefaultThinkingLevel
		tools             []string
		toolsSet          bool
		compaction        = -1 // position of the last compaction
		firstKept         = -1 // position of its firstKeptEntryId, before it
	)
	if header != nil {
		modelRef = header.Model
		if header.ThinkingLevel != "" {
			thinking = header.ThinkingLevel
		}
		if header.Tools != nil {
			tools, toolsSet = header.Tools, true
		}
	}
	for i := range path {
		e := &path[i]
		switch e.Type {
		case events.EntryModelChange:
			provider, modelID, modelRef = e.Provider, e.ModelID, ""
		case events.EntryMessage:
			if m := e.Message; m.Role == events.RoleAssistant && m.Provider != "" && m.Model != "" {
				provider, modelID, modelRef = m.Provider, m.Model, ""
			}
		case events.EntryThinkingLevelChange:
			thinking = e.ThinkingLevel
		case events.EntryActiveToolsChange:
			tools, toolsSet = e.ActiveToolNames, true
		case events.EntryCompaction:
			compaction = i
		}
	}
	if compaction >= 0 {
		want := path[compaction].FirstKeptEntryID
		for i := 0; i < compaction; i++ {
			if path[i].ID == want {
				firstKept = i
				break
			}
		}
	}
	switch {
	case modelID != "":
		ctx.Model = provider + "/" + modelID
	default:
		ctx.Model = modelRef
	}
	ctx.ThinkingLevel = thinking
	if toolsSet {
		ctx.Tools = slices.Clone(tools)
		if ctx.Tools == nil {
			ctx.Tools = []string{}
		}
	}

	// Pass 2: messages, over the range: the ruling compaction, the kept
	// entries before it, the entries after it (the whole path without one).
	// Every entry in the range gives at most one message (but for
	// turn_interrupted, rare), so its length is the capacity needed.
	from, to := 0, len(path) // the kept entries before the compaction
	if compaction >= 0 {
		from, to = compaction, compaction
		if firstKept >= 0 {
			from = firstKept
		}
	}
	size := len(path)
	if compaction >= 0 {
		size = to - from + len(path) - compaction // the summary, the kept, the rest
	}
	r := reducer{msgs: make([]events.Message, 0, size)}
	r.pending = r.pendingBuf[:0]
	var spans []span
	if withParts {
		spans = make([]span, 0, size)
	}
	add := func(i int) error {
		start := len(r.msgs)
		if i == compaction {
			c := &path[i]
			ts, err := millis(i, c)
			if err != nil {
				return err
			}
			r.msgs = append(r.msgs, events.Message{
				Role:         events.RoleCompactionSummary,
				Summary:      c.Summary,
				TokensBefore: c.TokensBefore,
				Timestamp:    ts,
			})
		} else if err := r.add(i, &path[i]); err != nil {
			return err
		}
		if withParts {
			spans = append(spans, span{index: i, start: start, end: len(r.msgs)})
		}
		return nil
	}
	if compaction >= 0 {
		ctx.CompactionID = path[compaction].ID
		ctx.FirstKeptMissing = firstKept < 0
		if err := add(compaction); err != nil {
			return Context{}, nil, err
		}
	}
	for i := from; i < to; i++ {
		if err := add(i); err != nil {
			return Context{}, nil, err
		}
	}
	for i := compaction + 1; compaction >= 0 && i < len(path); i++ {
		if err := add(i); err != nil {
			return Context{}, nil, err
		}
	}
	ctx.Messages = r.msgs
	if !withParts {
		return ctx, nil, nil
	}
	parts := make([]Part, len(spans))
	for k, s := range spans {
		parts[k] = Part{Index: s.index, Messages: r.msgs[s.start:s.end:s.end]}
	}
	return ctx, parts, nil
}

// span is where a part's messages are in the context, recorded while the
// message slice may still grow.
type span struct{ index, start, end int }

// checkPath verifies that header is a header and that path is a chain from a
// root, each entry the child of the one before.
func checkPath(header *events.Entry, path []events.Entry) error {
	if header != nil && header.Type != events.EntrySession {
		return pathErr(-1, header.ID, "has type %q, want %q", header.Type, events.EntrySession)
	}
	for i := range path {
		e := &path[i]
		switch {
		case e.Type == events.EntrySession:
			return pathErr(i, e.ID, "is a session header; pass the header separately, the path holds tree entries only")
		case i == 0 && e.ParentID != nil:
			return pathErr(i, e.ID, "has parentId %q; a path starts at a root (an entry with no parent)", *e.ParentID)
		case i > 0 && (e.ParentID == nil || *e.ParentID != path[i-1].ID):
			got := "null"
			if e.ParentID != nil {
				got = fmt.Sprintf("%q", *e.ParentID)
			}
			return pathErr(i, e.ID, "has parentId %s, want %q (the entry before it on the path)", got, path[i-1].ID)
		case e.Type == events.EntryMessage && e.Message == nil:
			return pathErr(i, e.ID, "is a message entry without a message")
		}
	}
	return nil
}
