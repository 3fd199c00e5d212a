// Package workspace is the one rule of session workspaces (DESIGN §7): a
// session's workspace is a directory inside its tenant's root
// <root>/<tenant> ([TenantRoot]), given as a path absolute or relative to
// the tenant root, by default <root>/<tenant>/<session id>. Tenant acme's
// session s1 and tenant beta's s1 never share a directory, and no path a
// session names leaves its tenant root (docs/tenancy.md).
//
// [Rel] applies the rule where a session is created (the gateway, the
// orchestrator) and where its tools run (pkg/toolbus), so the parts agree
// on what is inside the root and on what a session's entry records: the
// workspace relative to its tenant root. A relative record keeps a log valid
// wherever the root is mounted: toolrunners on other hosts resolve it
// against their own --workspace-root.
//
// # Errors
//
// Every refusal is a [*events.FieldError] on the field "workspace" that
// says why: a ".." that leaves the tenant root, an absolute path outside
// it, a symlink inside it that leads out of it, an invalid tenant or id, or an absolute path where
// the root is not known.
//
// # Concurrency
//
// Rel only reads the file system; it is safe for concurrent use. A symlink
// created after the check is caught where the tools run: pkg/toolbus
// resolves the workspace again, symlinks included, before every call.
package workspace
