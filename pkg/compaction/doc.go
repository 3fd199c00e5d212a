// Package compaction decides what a compaction keeps and what it
// summarises, and asks a model for the summary (DESIGN §5).
//
// Preparation is pure: [Prepare] reads a session path (root to leaf) and
// returns the messages to summarise, the first entry kept, the split-turn
// prefix, the previous summary and the accumulated file operations. What it
// cuts is the context the model is sent, as package sessiontree builds it,
// entry by entry: the same messages, the results a turn_interrupted makes
// up included. The rules, each with golden tests in testdata/:
//
//   - token estimate ([EstimateContext]): the usage of the last valid
//     assistant reply (not an error, not aborted, not all zero) plus an
//     estimate of every message after it (characters / 4, an image
//     [ImageTokens]);
//   - trigger ([ShouldCompact]): context tokens > window − reserve, strictly;
//   - cut point: walk back from the newest message until the keep-recent
//     budget is reached, then forward to the nearest entry that is not a tool
//     result (a result stays with its call); a cut inside a turn is a split
//     turn whose prefix is summarised separately and merged;
//   - repeated compaction: the previous summary goes to the summariser and
//     the messages the previous compaction kept are summarised once the cut
//     moves past them; nothing new to summarise is [ErrNothingToCompact];
//   - file operations (read, written, edited paths of the read, write and
//     edit tools) accumulate across compactions in the entry's details.
//
// [Summarize] builds the structured prompt (goal, progress, decisions,
// files, next steps; tool results truncated to [ToolResultChars]; a shell
// command kept out of the context, pi's !!, is kept out of it too) and
// calls an [llm.Provider], with the output capped at the model's limit.
//
// # Concurrency
//
// Everything here is safe for concurrent use; nothing keeps state.
//
// # Errors
//
// [Prepare] fails only with [ErrNothingToCompact], an invalid [Settings]
// (a *FieldError naming the field) or a path the reducer refuses (a
// *sessiontree.ContextError naming the entry). [Summarize] wraps the provider's
// *llm.Error, so llm.KindOf classifies it.
package compaction
