// Package tools implements Cairn's built-in coding tools — read, write, edit,
// bash, grep, find and ls — as [tool.Tool] values confined to a workspace
// directory. The same tools run in process (cairn run) and inside toolrunner
// workers; [New] returns them all for a workspace root and [Set.Get] finds
// one by name.
//
// # Confinement
//
// Every path a tool is given is resolved by a [Workspace]: relative paths are
// relative to the workspace, and a path that leaves it — by "..", by being
// absolute and elsewhere, or through a symlink (an intermediate directory or
// the final component, existing or about to be created) — is refused with a
// [*PathError] matching [ErrOutside]. Resolution yields a symlink-free path
// that is then opened through an [os.Root], so a symlink swapped in between
// the check and the use is refused by the kernel-side walk as well.
//
// bash is confined only in where it starts (its working directory and a
// minimal environment): it is a shell, not a sandbox. What it writes is
// confined by the other tools' checks when they later read it.
//
// # Output caps
//
// Text output is capped at [DefaultMaxLines] lines or [DefaultMaxBytes]
// bytes, whichever comes first (configurable with [WithOutputLimit]). read,
// grep, find and ls keep the head; bash keeps the tail. A capped result ends
// with a note saying how much was cut and how to see more, and its Details
// carry a "truncation" object.
//
// # Errors
//
// Arguments are decoded strictly: an unknown argument, a missing required one
// or a value of the wrong type or range is an [*events.FieldError] (matching
// [events.ErrInvalid]) naming the argument. Failures a model can act on (file
// not found, edit text not found, command exited non-zero) are returned as
// error results (Result.IsError) with a message saying what happened;
// Execute's error return is used for invalid arguments, confinement
// violations and I/O failures.
//
// # Concurrency
//
// A [Set] and its tools are safe for concurrent use; every tool runs
// parallel with the others of its batch. Calls that touch the same file at
// the same time see the file system's ordering, nothing stronger.
//
// # Cancellation
//
// Cancelling ctx stops a walk (grep, find) between files and kills a running
// bash command's whole process group; bash then returns an error result with
// the output so far.
package tools
