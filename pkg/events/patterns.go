package events

// Patterns are subject patterns, one per stream, KV bucket and object
// store of an installation, each covering every subject of it under the
// names' prefix: the form a NATS permission list takes. The patterns cover
// the subjects messages are published on; a JetStream consumer's messages
// arrive on its inbox, so reading a stream needs its JetStream API
// subjects ($JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>, built from the
// stream and consumer names of [Names]), not these.
type Patterns struct {
	Commands    string // <prefix>.cmd.*.* : clients' commands (stream CommandsStream)
	Sessions    string // <prefix>.session.*.* : the session log (SessionsStream)
	Events      string // <prefix>.events.*.* : live agent events (EventsStream)
	Tools       string // <prefix>.tool.> : tool calls of every pool (ToolsStream; one pool: Names.PoolTools)
	Results     string // <prefix>.result.*.* : tool and compaction results (ResultsStream)
	Compactions string // <prefix>.compact.*.* : compaction requests (CompactionsStream)
	Cancels     string // <prefix>.cancel.*.* : core NATS, no stream
	// ExtensionCalls <prefix>.ext.call.* and ExtensionNotices
	// <prefix>.ext.notice.> : hook requests to extensions and lifecycle
	// notices, core NATS, no stream
	ExtensionCalls   string
	ExtensionNotices string

	ToolsKV       string // $KV.<prefix>_tools.>
	ToolStartsKV  string // $KV.<prefix>_toolstarts.>
	LeasesKV      string // $KV.<prefix>_leases.>
	CheckpointsKV string // $KV.<prefix>_checkpoints.>
	OutcomesKV    string // $KV.<prefix>_outcomes.>
	BudgetsKV     string // $KV.<prefix>_budgets.>
	BudgetUseKV   string // $KV.<prefix>_budget_use.>
	KeysKV        string // $KV.<prefix>_keys.>
	ResourcesKV   string // $KV.<prefix>_resources.>
	ExtensionsKV  string // $KV.<prefix>_extensions.>

	Blobs     string // $O.<prefix>_blobs.>
	Snapshots string // $O.<prefix>_snapshots.>
}

// Patterns returns the subject patterns of every stream and bucket under n.
func (n Names) Patterns() Patterns {
	return Patterns{
		Commands: n.AllCommands(), Sessions: n.AllSessions(), Events: n.AllEvents(), Tools: n.AllTools(),
		Results: n.AllResults(), Compactions: n.AllCompactions(), Cancels: n.AllCancels(),
		ToolsKV: KVSubjects(n.ToolsBucket()), ToolStartsKV: KVSubjects(n.ToolStartsBucket()),
		LeasesKV: KVSubjects(n.LeasesBucket()), CheckpointsKV: KVSubjects(n.CheckpointsBucket()),
		OutcomesKV: KVSubjects(n.OutcomesBucket()),
		BudgetsKV:  KVSubjects(n.BudgetsBucket()), BudgetUseKV: KVSubjects(n.BudgetUseBucket()),
		KeysKV: KVSubjects(n.KeysBucket()), ResourcesKV: KVSubjects(n.ResourcesBucket()),
		ExtensionsKV:   KVSubjects(n.ExtensionsBucket()),
		ExtensionCalls: n.AllExtensionCalls(), ExtensionNotices: n.AllExtensionNotices(),
		Blobs: ObjectSubjects(n.BlobsBucket()), Snapshots: ObjectSubjects(n.SnapshotsBucket()),
	}
}

// All is every pattern of p, in the order of its fields.
func (p Patterns) All() []string {
	return []string{p.Commands, p.Sessions, p.Events, p.Tools, p.Results, p.Compactions, p.Cancels,
		p.ExtensionCalls, p.ExtensionNotices,
		p.ToolsKV, p.ToolStartsKV, p.LeasesKV, p.CheckpointsKV, p.OutcomesKV, p.BudgetsKV, p.BudgetUseKV, p.KeysKV,
		p.ResourcesKV, p.ExtensionsKV, p.Blobs, p.Snapshots}
}

// TenantPatterns are the per-session patterns of one tenant's sessions:
// what a NATS permission confining a tenant's workers names (the tool
// calls of a pool restricted to tenants are [Names.PoolTenantTools]).
type TenantPatterns struct {
	Commands    string // <prefix>.cmd.<tenant>.* (as published; stored under a partition)
	Sessions    string // <prefix>.session.<tenant>.*
	Events      string // <prefix>.events.<tenant>.*
	Results     string // <prefix>.result.<tenant>.*
	Compactions string // <prefix>.compact.<tenant>.*
	Cancels     string // <prefix>.cancel.<tenant>.*
}

// TenantPatterns returns the patterns of tenant's sessions under n.
func (n Names) TenantPatterns(tenant string) TenantPatterns {
	t := "." + tenant + ".*"
	return TenantPatterns{
		Commands: n.p() + ".cmd" + t, Sessions: n.p() + ".session" + t, Events: n.p() + ".events" + t,
		Results: n.p() + ".result" + t, Compactions: n.p() + ".compact" + t, Cancels: n.p() + ".cancel" + t,
	}
}
