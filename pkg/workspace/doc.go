// Package workspace is the one rule of session workspaces (DESIGN §7): a
// session's workspace is a directory inside the workspace root, given as a
// path absolute or relative to the root, by default <root>/<session id>.
//
// [Rel] applies the rule where a session is created (the gateway, the
// orchestrator) and where its tools run (pkg/toolbus), so the parts agree
// on what is inside the root and on what a session's entry records: the
// workspace relative to the root. A relative record keeps a log valid
// wherever the root is mounted: toolrunners on other hosts resolve it
// against their own --workspace-root.
//
// # Errors
//
// Every refusal is a [*events.FieldError] on the field "workspace" that
// says why: a ".." that leaves the root, an absolute path outside it, a
// symlink inside the root that leads out of it, or an absolute path where
// the root is not known.
//
// # Concurrency
//
// Rel only reads the file system; it is safe for concurrent use. A symlink
// created after the check is caught where the tools run: pkg/toolbus
// resolves the workspace again, symlinks included, before every call.
package workspace
