package events

import (
	"strconv"
	"strings"
)

// DefaultPrefix is the namespace of every stream, subject and bucket name.
const DefaultPrefix = "cairn"

// Names builds stream, subject and bucket names under one prefix; the zero
// value uses [DefaultPrefix]. A prefix lets several Cairn installations share
// one NATS account: prefix "team2" gives stream TEAM2_SESSIONS and subjects
// team2.session.<tenant>.<sid>.
type Names struct {
	Prefix string
}

func (n Names) p() string {
	if n.Prefix == "" {
		return DefaultPrefix
	}
	return n.Prefix
}

func (n Names) stream(s string) string { return strings.ToUpper(n.p()) + "_" + s }

// ValidatePrefix reports whether prefix can name streams and subjects: 1–32
// characters of [a-z0-9_-].
func ValidatePrefix(prefix string) error {
	if prefix == "" || len(prefix) > 32 {
		return fieldErr("prefix", "must be 1-32 characters, got %d", len(prefix))
	}
	for i := 0; i < len(prefix); i++ {
		c := prefix[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return fieldErr("prefix", "%q has %q; only a-z 0-9 _ - are allowed", prefix, c)
		}
	}
	return nil
}

// Stream names (DESIGN §2).
func (n Names) SessionsStream() string { return n.stream("SESSIONS") }
func (n Names) CommandsStream() string { return n.stream("COMMANDS") }
func (n Names) ToolsStream() string    { return n.stream("TOOLS") }
func (n Names) EventsStream() string   { return n.stream("EVENTS") }

// ResultsStream holds tool and compaction results on their way back to the
// session's owner: a stream, so a result outlives the orchestrator's death.
func (n Names) ResultsStream() string { return n.stream("RESULTS") }

// CompactionsStream is the work queue of compaction requests.
func (n Names) CompactionsStream() string { return n.stream("COMPACTIONS") }

// ToolsBucket is the KV bucket of the tool registry: one key per tool name.
func (n Names) ToolsBucket() string { return n.p() + "_tools" }

// ToolStartsBucket is the KV bucket where toolrunners record the start of a
// call before executing it, so a redelivered non-idempotent call is not run twice.
func (n Names) ToolStartsBucket() string { return n.p() + "_toolstarts" }

// OutcomesBucket is the KV bucket where the orchestrator records the
// [Outcome] of a command no log entry can name (refused where the session
// has no log: a refused create, a command to a session that does not
// exist; or applied with nothing written: a navigation to the active
// leaf), under [OutcomeKey]; the gateway reads it for ?wait=applied and
// the command status. Its keys expire like the commands they answer.
func (n Names) OutcomesBucket() string { return n.p() + "_outcomes" }

// OutcomeKey is the key of command commandID of session r in
// [Names.OutcomesBucket]: <tenant>.<sid>.<commandID>; both must be valid.
func OutcomeKey(r SessionRef, commandID string) string { return r.String() + "." + commandID }

// BudgetsBucket is the KV bucket of tenants' budget limits
// (limits.<tenant>, pkg/budget).
func (n Names) BudgetsBucket() string { return n.p() + "_budgets" }

// BudgetUseBucket is the KV bucket of tenants' budget use: per-day settled
// use and reservations in flight (day.<tenant>.<YYYY-MM-DD>) and run slots
// (runs.<tenant>), pkg/budget.
func (n Names) BudgetUseBucket() string { return n.p() + "_budget_use" }

// KeysBucket is the KV bucket of the gateway's API keys: one key per API
// key id, its value the key's record (role, tenant, SHA-256 of the
// secret, never the secret). Every gateway watches it, so a key created or
// revoked on one gateway holds on all of them within moments.
func (n Names) KeysBucket() string { return n.p() + "_keys" }

// ResourcesBucket is the KV bucket of tenants' skills and prompt
// templates (pkg/resources), under [ResourceKey]; a key's revision is the
// resource's version, which the entries of a run that used it record.
func (n Names) ResourcesBucket() string { return n.p() + "_resources" }

// ResourceKey is the key of resource name of kind ("skill" or "template")
// of tenant in [Names.ResourcesBucket]: <tenant>.<kind>.<name>; all must
// be valid (pkg/resources checks them).
func ResourceKey(tenant, kind, name string) string { return tenant + "." + kind + "." + name }

// BlobsBucket is the object store bucket for entry parts over the max payload.
func (n Names) BlobsBucket() string { return n.p() + "_blobs" }

// SnapshotsBucket is the object store bucket of per-session snapshots of
// the log, for fast cold loads.
func (n Names) SnapshotsBucket() string { return n.p() + "_snapshots" }

// LeasesBucket is the KV bucket of orchestrator membership and partition
// leases (keys expire after the lease TTL).
func (n Names) LeasesBucket() string { return n.p() + "_leases" }

// CheckpointsBucket is the KV bucket of per-partition command checkpoints.
func (n Names) CheckpointsBucket() string { return n.p() + "_checkpoints" }

// ToolPoolConsumer is the durable consumer on [Names.ToolsStream] shared by
// every toolrunner of pool.
func (n Names) ToolPoolConsumer(pool string) string { return "toolrunner_" + pool }

// CompactorConsumer is the durable consumer on [Names.CompactionsStream]
// shared by every compactor.
func (n Names) CompactorConsumer() string { return "compactor" }

// ProjectorConsumer is the projector's default durable consumer on
// [Names.SessionsStream].
func (n Names) ProjectorConsumer() string { return n.p() + "-projector" }

// KVStream is the stream under KV bucket (nats.go's naming).
func KVStream(bucket string) string { return "KV_" + bucket }

// KVSubjects covers every key of KV bucket.
func KVSubjects(bucket string) string { return "$KV." + bucket + ".>" }

// KVSubject is the subject key of KV bucket is stored under.
func KVSubject(bucket, key string) string { return "$KV." + bucket + "." + key }

// ObjectStream is the stream under object store bucket (nats.go's naming).
func ObjectStream(bucket string) string { return "OBJ_" + bucket }

// ObjectSubjects covers every chunk and metadata subject of object store bucket.
func ObjectSubjects(bucket string) string { return "$O." + bucket + ".>" }

// Subjects. Every per-session subject carries the session's tenant as its
// own token before the session id (<prefix>.session.<tenant>.<sid>), so a
// NATS permission can confine a tenant (docs/tenancy.md). r must be valid
// (see [SessionRef.Validate]); these functions do not check it again.
func (n Names) SessionSubject(r SessionRef) string { return n.p() + ".session." + r.String() }
func (n Names) CommandSubject(r SessionRef) string { return n.p() + ".cmd." + r.String() }
func (n Names) EventSubject(r SessionRef) string   { return n.p() + ".events." + r.String() }

// ToolSubject is where a call of tool in pool, made by a session of
// tenant, is published for toolrunners: <prefix>.tool.<pool>.<tenant>.<tool>,
// so the workers of a pool restricted to tenants can be confined to
// [Names.PoolTenantTools].
func (n Names) ToolSubject(pool, tenant, tool string) string {
	return n.p() + ".tool." + pool + "." + tenant + "." + tool
}

// PoolTools covers every tool subject of pool: the filter of its consumer.
func (n Names) PoolTools(pool string) string { return n.p() + ".tool." + pool + ".>" }

// PoolTenantTools covers the calls of tenant's sessions to pool.
func (n Names) PoolTenantTools(pool, tenant string) string {
	return n.p() + ".tool." + pool + "." + tenant + ".>"
}

// CancelSubject (core NATS, no stream) asks toolrunners to cancel the running
// tool calls of session r, e.g. when the session aborts.
func (n Names) CancelSubject(r SessionRef) string { return n.p() + ".cancel." + r.String() }

// AllCancels covers every session's cancel subject.
func (n Names) AllCancels() string { return n.p() + ".cancel.*.*" }

// ResultSubject is where results for session r come back.
func (n Names) ResultSubject(r SessionRef) string { return n.p() + ".result." + r.String() }

// CompactionSubject is where compaction requests for session r are queued.
func (n Names) CompactionSubject(r SessionRef) string { return n.p() + ".compact." + r.String() }

// PartitionCommands is the filter of the commands stored for partition p
// (see [Names.StoredCommands]).
func (n Names) PartitionCommands(p int) string { return n.p() + ".cmd." + strconv.Itoa(p) + ".*.*" }

// StoredCommandSubject is the subject a command of session r in
// partition p is stored under.
func (n Names) StoredCommandSubject(p int, r SessionRef) string {
	return n.p() + ".cmd." + strconv.Itoa(p) + "." + r.String()
}

// StoredSessionCommands covers the stored commands of session r, whatever
// its partition (see [Names.StoredCommands]).
func (n Names) StoredSessionCommands(r SessionRef) string { return n.p() + ".cmd.*." + r.String() }

// StoredCommands is the subject transform destination of
// [Names.CommandsStream]: a command published on [Names.CommandSubject] is
// stored as <prefix>.cmd.<p>.<tenant>.<sid>, p being the partition of the
// session (tenant and id together) out of partitions, computed by the
// server.
func (n Names) StoredCommands(partitions int) string {
	return n.p() + ".cmd.{{partition(" + strconv.Itoa(partitions) + ",1,2)}}.{{wildcard(1)}}.{{wildcard(2)}}"
}

// Wildcards covering every session of every tenant, for stream
// configuration and consumers.
func (n Names) AllSessions() string    { return n.p() + ".session.*.*" }
func (n Names) AllCommands() string    { return n.p() + ".cmd.*.*" }
func (n Names) AllEvents() string      { return n.p() + ".events.*.*" }
func (n Names) AllTools() string       { return n.p() + ".tool.>" }
func (n Names) AllResults() string     { return n.p() + ".result.*.*" }
func (n Names) AllCompactions() string { return n.p() + ".compact.*.*" }

// TenantSessions covers the log of every session of tenant; the other
// per-tenant patterns are in [Names.TenantPatterns].
func (n Names) TenantSessions(tenant string) string { return n.p() + ".session." + tenant + ".*" }

// LegacySessions covers the session subjects of the layout before tenants
// (<prefix>.session.<sid>, one token): what `cairn provision --migrate`
// copies to the default tenant (pkg/provision).
func (n Names) LegacySessions() string { return n.p() + ".session.*" }

// LegacyPerSession lists the one-token per-session wildcards of the layout
// before tenants, stream by stream: what [Names.AllSessions] and its
// siblings were.
func (n Names) LegacyPerSession() map[string]string {
	return map[string]string{
		n.SessionsStream(): n.p() + ".session.*", n.CommandsStream(): n.p() + ".cmd.*",
		n.EventsStream(): n.p() + ".events.*", n.ResultsStream(): n.p() + ".result.*",
		n.CompactionsStream(): n.p() + ".compact.*",
	}
}

// LegacyStoredCommands is the subject transform destination of
// [Names.CommandsStream] in the layout before tenants (one token after the
// partition), which `cairn provision --migrate` replaces with
// [Names.StoredCommands].
func (n Names) LegacyStoredCommands(partitions int) string {
	return n.p() + ".cmd.{{partition(" + strconv.Itoa(partitions) + ",1)}}.{{wildcard(1)}}"
}

// SessionOf returns the session at the end of a per-session subject such
// as cairn.session.<tenant>.<sid> (its last two tokens after at least the
// prefix and the kind), and false if subject has no valid one: a subject
// of the layout before tenants (cairn.session.<sid>) names none.
func SessionOf(subject string) (SessionRef, bool) {
	if strings.Count(subject, ".") < 3 {
		return SessionRef{}, false
	}
	i := strings.LastIndexByte(subject, '.')
	j := strings.LastIndexByte(subject[:i], '.')
	r := SessionRef{Tenant: subject[j+1 : i], ID: subject[i+1:]}
	return r, r.Validate() == nil
}

// NATS header names Cairn sets. Header names are case sensitive in NATS.
const (
	HeaderMsgID  = "Nats-Msg-Id"  // deduplication key
	HeaderSchema = "Cairn-Schema" // schema version of the payload
)

// HeaderTenant is the HTTP header that names the tenant a request acts for
// (docs/tenancy.md): the gateway sets it, from the request's principal,
// on every query it hands to the projector, replacing what the client
// sent; an absent header is [DefaultTenant].
const HeaderTenant = "Cairn-Tenant"

// CommandMsgID is the Nats-Msg-Id of command commandID of a session of
// tenant: <tenant>.<commandID>. Command ids are the clients' idempotency
// keys; scoping them by tenant keeps one tenant's id from deduplicating
// (and so revealing, or swallowing) another tenant's command.
func CommandMsgID(tenant, commandID string) string { return tenant + "." + commandID }

// MsgID is the Nats-Msg-Id of an entry appended to session r:
// <tenant>.<sid>.<entry id>.
func MsgID(r SessionRef, entryID string) string { return r.String() + "." + entryID }
