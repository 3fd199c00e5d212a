// Package provision owns the configuration of every stream, KV bucket,
// object store and shared durable consumer Cairn uses: one function per
// object ([SessionsStream], [CommandsStream], [ToolStreams],
// [CompactionsStream], [ToolBuckets], [LeasesBucket], [CheckpointsBucket],
// [OutcomesBucket], [BlobsStore], [SnapshotsStore], [ToolPoolConsumer],
// [CompactorConsumer]), all of them gathered by [Config], and it creates or
// updates them idempotently ([Apply]); `cairn provision` and `cairn up` run
// it. Their names and subjects come from events.Names, which owns them.
//
// Services started before `cairn provision` create some of what they need
// when it is missing, from the same functions, so what they create is what
// Apply would create (R1 unless told otherwise): toolrunners the tool
// streams and buckets (pkg/toolbus), compactors the compactions stream
// (pkg/compactbus), the orchestrator its KV buckets, the gateway the
// outcomes bucket, and pkg/session the session log and its object stores
// unless told not to. The rest they check for at start and name what is
// missing: the orchestrator the commands and tool streams; `cairn
// orchestrator` and `cairn gateway` the session log. Of what exists a
// service changes only what is its own: the orchestrator sets the leases
// bucket's TTL from its lease TTL (keeping the replicas it finds), and
// toolrunners and compactors create or update their shared consumer with
// their AckWait. Only Apply changes a stream's configuration; nothing
// deletes.
//
// # Tests
//
// internal/natstest.Provision and RunProvisioned run Apply on a test
// server, so tests run against what production has.
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
// ({{partition(n,1,2)}} subject transform over tenant and id), so clients never need to know n:
// [DefaultPartitions] unless [Options] say otherwise (tests use fewer; the
// orchestrators' partition count must match). Apply refuses to change the
// partitions of an existing CAIRN_COMMANDS.
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
