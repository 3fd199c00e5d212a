// Package provision holds the configuration of every stream, KV bucket,
// object store and shared durable consumer Cairn uses ([Config]) and
// creates or updates them idempotently ([Apply]); `cairn provision` and
// `cairn up` run it. The configurations come from the packages that use
// them (pkg/session, pkg/toolbus, pkg/compactbus, and this package for the
// commands stream and the orchestrator's buckets), so a service that
// creates a missing object at start creates the same thing. Services never
// update what exists; they check at start that what they need exists and
// say what is missing.
//
// # Users and credentials
//
// Each service kind connects to NATS as its own user with only the
// permissions its work needs ([Users], [UserFor]: the table is users.go).
// Users are nkeys: [EnsureCredentials] keeps one seed file per user (0600,
// directory 0700) and [AuthorizationConfig] renders the servers'
// authorization block; [Credential.Options] connects as one. [WriteCerts]
// makes a CA and a server certificate for client and route TLS.
//
// # Partitions
//
// Sessions are spread over a fixed number of partitions for ownership. The
// server computes a session's partition from its id when it stores a command
// ({{partition(n,1)}} subject transform), so clients never need to know n.
// Apply refuses to change the partitions of an existing CAIRN_COMMANDS.
//
// # Durability
//
// Apply sets exactly Cairn's configuration with the replicas given: a
// setting changed by hand (say a longer max age with `nats stream edit`) is
// put back, and a limit Cairn sets lower than the one found drops the
// messages beyond it. Two values belong to the running services and are
// kept when the object exists: the leases bucket's TTL (each orchestrator
// sets it from its lease TTL) and a shared consumer's AckWait (set from the
// service's --ack-wait). Raising replicas (R1 to R3) keeps every message;
// the server copies the stream to the new replicas in the background, and
// consumers follow their stream's replicas. Apply never deletes anything.
//
// # Errors
//
// Apply checks everything before it changes anything: an existing object
// whose storage, retention, subject transform or another setting the
// server cannot change in place differs from Cairn's fails the whole run
// with one [IncompatibleError] (errors.Is [ErrIncompatible]) per
// difference, naming the object and the setting, and nothing is changed.
// An error after that names the object it was provisioning; the report
// lists those provisioned before it. Bad options are [events.FieldError]s.
//
// # Concurrency
//
// Apply may run while services start and create missing objects: a stream
// created meanwhile is updated instead. Two Apply runs at once converge on
// the same configuration.
package provision
