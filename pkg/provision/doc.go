// Package provision holds the configuration of every stream, key-value and
// object bucket Cairn uses, creates or updates them idempotently, and checks
// that they exist (services check at start and say what is missing).
//
// # Partitions
//
// Sessions are spread over a fixed number of partitions for ownership. The
// server computes a session's partition from its id when it stores a command
// ({{partition(n,1)}} subject transform), so clients never need to know n.
package provision
