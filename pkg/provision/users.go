package provision

import (
	"fmt"
	"slices"

	"github.com/cairn-agents/cairn/pkg/events"
)

// This file is the permission table: what each kind of service may publish
// and subscribe to on NATS (DESIGN §10). It is built from the name
// functions of the packages that use the subjects, so a renamed stream
// changes the permissions with it.
//
// How JetStream maps onto subjects, and so what a grant means:
//   - a JetStream publish is a plain publish on the stream's subject (the
//     stream captures it) with a reply inbox for the ack;
//   - every API call is a request on $JS.API.<verb>.<stream>[.<name>...];
//     a pull consumer needs $JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>,
//     acks go to $JS.ACK.<stream>.<consumer>.>, flow control of pushed
//     (ordered) consumers to $JS.FC.<stream>.>;
//   - a durable consumer with a filter is created on
//     $JS.API.CONSUMER.CREATE.<stream>.<name>.<filter>, so granting exactly
//     that subject pins both the name and the filter (the server refuses a
//     body whose filter differs from the subject's);
//   - a KV bucket b is the stream KV_b with subjects $KV.b.>, read with
//     direct gets ($JS.API.DIRECT.GET.KV_b.$KV.b.<key>); an object store b
//     is the stream OBJ_b with subjects $O.b.>; replacing an object purges
//     its old chunks ($JS.API.STREAM.PURGE.OBJ_b).
//
// No service user is granted $JS.API.> or any STREAM.DELETE, STREAM.PURGE
// (but the snapshot cache's), STREAM.MSG.DELETE or STREAM.UPDATE of a
// stream it does not own. STREAM.CREATE of the streams a service creates
// when they are missing is granted: it cannot change an existing stream.
//
// Replies: every user gets its own inbox prefix ([User.InboxPrefix], the
// client sets it with nats.CustomInboxPrefix) and may subscribe only under
// it, so no service can read the replies (pulled messages included) of
// another.

// Role is a kind of NATS user: one per kind of service, and the admin.
type Role string

// The roles. Every service of one kind connects as the same user; each
// toolrunner pool has a user of its own.
const (
	RoleAdmin        Role = "admin" // cairn provision and operator commands: everything
	RoleOrchestrator Role = "orchestrator"
	RoleToolrunner   Role = "toolrunner"
	RoleCompactor    Role = "compactor"
	RoleProjector    Role = "projector"
	RoleGateway      Role = "gateway"
	RoleExtension    Role = "extension" // extension processes: register handlers, answer hook requests
)

// Roles lists every role but the toolrunner's once, in a stable order; the
// toolrunner comes once per pool (see [Users]).
var Roles = []Role{RoleAdmin, RoleOrchestrator, RoleToolrunner, RoleCompactor, RoleProjector, RoleGateway, RoleExtension}

// Permissions is what one user may publish and subscribe to; nil lists
// (the admin's) mean everything.
type Permissions struct {
	Publish   []string
	Subscribe []string
	// Responses lets the user answer requests it received: publish once
	// to each reply subject of a message delivered to it (NATS
	// allow_responses), and nowhere else in other users' inboxes.
	Responses bool
}

// User is the NATS user of one role (and pool, for toolrunners).
type User struct {
	Role Role
	// Pool is the toolrunner pool; empty for other roles.
	Pool string
	// Permissions of the user; nil lists for the admin.
	Permissions Permissions
}

// Name names the user: the role, or "toolrunner-<pool>". It names its
// credentials file and its inbox prefix.
func (u User) Name() string {
	if u.Role == RoleToolrunner {
		return string(u.Role) + "-" + u.Pool
	}
	return string(u.Role)
}

// InboxPrefix is the reply subject prefix the user's connections set with
// nats.CustomInboxPrefix; the user may subscribe under it only.
func (u User) InboxPrefix() string { return "_INBOX_" + u.Name() }

// Users returns the user of every role under names n, a toolrunner user per
// pool (default [DefaultPool]).
func Users(n events.Names, pools []string) ([]User, error) {
	if len(pools) == 0 {
		pools = []string{DefaultPool}
	}
	var us []User
	for _, r := range Roles {
		if r != RoleToolrunner {
			u, err := UserFor(n, r, "")
			if err != nil {
				return nil, err
			}
			us = append(us, u)
			continue
		}
		var seen []string
		for _, p := range pools {
			if slices.Contains(seen, p) {
				continue
			}
			seen = append(seen, p)
			u, err := UserFor(n, r, p)
			if err != nil {
				return nil, err
			}
			us = append(us, u)
		}
	}
	return us, nil
}

// UserFor returns the user of role (pool names the toolrunner's pool and
// must be empty for other roles) with its permissions under names n.
func UserFor(n events.Names, role Role, pool string) (User, error) {
	if role == RoleToolrunner {
		if err := events.ValidateToolName("pool", pool); err != nil {
			return User{}, &events.FieldError{Field: "pool", Problem: fmt.Sprintf("%q: 1-64 characters of A-Z a-z 0-9 _ - expected", pool)}
		}
	} else if pool != "" {
		return User{}, &events.FieldError{Field: "pool", Problem: fmt.Sprintf("only toolrunners have a pool, not %s", role)}
	}
	u := User{Role: role, Pool: pool}
	var g grants
	switch role {
	case RoleAdmin:
		return u, nil
	case RoleOrchestrator:
		g = orchestratorGrants(n)
	case RoleToolrunner:
		g = toolrunnerGrants(n, pool)
	case RoleCompactor:
		g = compactorGrants(n)
	case RoleProjector:
		g = projectorGrants(n)
	case RoleGateway:
		g = gatewayGrants(n)
	case RoleExtension:
		g = extensionGrants(n)
	default:
		return User{}, &events.FieldError{Field: "role", Problem: fmt.Sprintf("%q is not a role; one of %v expected", role, Roles)}
	}
	g.pub("$JS.API.INFO") // account info: limits, no data
	g.sub(u.InboxPrefix() + ".>")
	u.Permissions = Permissions{Publish: g.p, Subscribe: g.s, Responses: role == RoleExtension}
	return u, nil
}

// extensionGrants: keep its handler registrations, hear the hook requests
// of every handler and the sessions' lifecycle notices, answer the
// requests (Responses). No session log, commands, tools or results: what
// an extension decides reaches a session only through the orchestrator's
// reduction of its answers.
func extensionGrants(n events.Names) grants {
	var g grants
	g.sub(n.AllExtensionCalls(), n.AllExtensionNotices())
	g.kv(n.ExtensionsBucket(), true)
	g.create(events.KVStream(n.ExtensionsBucket()))
	return g
}

// toolrunnerGrants: consume the pool's calls, publish results and the
// calls' live progress, keep the tool registry and the call starts, hear
// cancels. No session log, no commands.
func toolrunnerGrants(n events.Names, pool string) grants {
	var g grants
	g.pub(n.AllResults(), n.AllEvents())
	g.sub(n.AllCancels())
	g.streams(n.ToolsStream(), n.ResultsStream(), n.EventsStream())
	g.durable(n.ToolsStream(), n.ToolPoolConsumer(pool), n.PoolTools(pool))
	g.kv(n.ToolsBucket(), true)
	g.kv(n.ToolStartsBucket(), true)
	return g
}

// compactorGrants: consume compaction requests, publish their results.
func compactorGrants(n events.Names) grants {
	var g grants
	g.pub(n.AllResults())
	g.streams(n.CompactionsStream(), n.ResultsStream())
	g.durable(n.CompactionsStream(), n.CompactorConsumer(), n.AllCompactions())
	return g
}

// projectorGrants: read the log (its durable consumer and rebuilds).
func projectorGrants(n events.Names) grants {
	var g grants
	s := n.SessionsStream()
	g.info(s)
	g.reader(s)
	g.objects(n.BlobsBucket(), false)
	return g
}

// gatewayGrants: publish commands, read everything clients may query or
// follow (the log, commands' outcomes, live events), and tenants'
// budget limits. No session entries:
// the gateway's session log is read-only (no snapshot writes either).
func gatewayGrants(n events.Names) grants {
	var g grants
	g.pub(n.AllCommands())
	g.streams(n.SessionsStream(), n.CommandsStream(), n.EventsStream(), n.ResultsStream(), n.ToolsStream())
	for _, s := range []string{n.SessionsStream(), n.EventsStream(), n.CommandsStream()} {
		g.reader(s)
	}
	g.kv(n.OutcomesBucket(), false)
	g.kv(n.ToolsBucket(), false)
	g.create(events.KVStream(n.OutcomesBucket()))
	g.kv(n.BudgetsBucket(), true) // budgets: limits set, today's use read
	g.kv(n.BudgetUseBucket(), false)
	g.kv(n.KeysBucket(), true)      // API keys: created, revoked, watched
	g.kv(n.ResourcesBucket(), true) // skills and templates: put, read, deleted
	for _, b := range []string{n.BudgetsBucket(), n.BudgetUseBucket(), n.KeysBucket(), n.ResourcesBucket()} {
		g.create(events.KVStream(b))
	}
	g.objects(n.BlobsBucket(), false)
	return g
}

// orchestratorGrants: the only writer of session entries. It reads the
// commands, dispatches tool calls, compactions and cancels, publishes live
// events, follows results, and keeps its leases, checkpoints, outcomes,
// blobs and snapshots. It publishes commands only on sub-agents' behalf
// (a child's create, prompt and abort; a parent's task_result, which the
// gateway refuses from clients, docs/subagents.md). It may not purge or
// delete.
func orchestratorGrants(n events.Names) grants {
	var g grants
	g.pub(n.AllSessions(), n.AllEvents(), n.AllTools(), n.AllCompactions(),
		n.AllCancels(), n.AllCommands())
	g.sub(n.AllResults(), n.AllEvents())
	streams := []string{n.SessionsStream(), n.CommandsStream(), n.ToolsStream(), n.EventsStream(),
		n.ResultsStream(), n.CompactionsStream()}
	g.streams(streams...)
	for _, s := range streams {
		g.reader(s)
	}
	for _, b := range []string{n.LeasesBucket(), n.CheckpointsBucket(), n.OutcomesBucket(), n.BudgetUseBucket()} {
		g.kv(b, true)
		g.create(events.KVStream(b))
	}
	g.kv(n.ToolsBucket(), false)
	g.kv(n.ToolStartsBucket(), false)
	g.kv(n.ExtensionsBucket(), false) // extension handlers: watched, called, notified
	g.create(events.KVStream(n.ExtensionsBucket()))
	g.pub(n.AllExtensionCalls(), n.AllExtensionNotices())
	g.kv(n.BudgetsBucket(), false) // budgets: limits read, use reserved and settled
	g.create(events.KVStream(n.BudgetsBucket()))
	g.kv(n.ResourcesBucket(), false) // skills and templates: read at every save point
	g.create(events.KVStream(n.ResourcesBucket()))
	g.pub("$JS.API.STREAM.UPDATE." + events.KVStream(n.LeasesBucket())) // its TTL follows the lease TTL
	snaps := n.SnapshotsBucket()
	g.objects(n.BlobsBucket(), true)
	g.objects(snaps, true)
	g.pub("$JS.API.STREAM.PURGE." + events.ObjectStream(snaps)) // a replaced snapshot drops its old chunks
	return g
}

// grants collects publish and subscribe subjects.
type grants struct{ p, s []string }

func (g *grants) pub(subjects ...string) {
	for _, s := range subjects {
		if !slices.Contains(g.p, s) {
			g.p = append(g.p, s)
		}
	}
}

func (g *grants) sub(subjects ...string) {
	for _, s := range subjects {
		if !slices.Contains(g.s, s) {
			g.s = append(g.s, s)
		}
	}
}

// info grants looking streams up.
func (g *grants) info(streams ...string) {
	for _, s := range streams {
		g.pub("$JS.API.STREAM.INFO." + s)
	}
}

// create grants creating stream s when it is missing (an existing stream
// is never changed by a create).
func (g *grants) create(s string) { g.pub("$JS.API.STREAM.CREATE." + s) }

// streams grants looking up and creating (when missing) each stream.
func (g *grants) streams(streams ...string) {
	for _, s := range streams {
		g.info(s)
		g.create(s)
	}
}

// get grants reading single messages of stream s (direct and API gets).
func (g *grants) get(s string) {
	g.pub("$JS.API.DIRECT.GET."+s, "$JS.API.DIRECT.GET."+s+".>", "$JS.API.STREAM.MSG.GET."+s)
}

// reader grants single gets and short-lived consumers of any name on
// stream s (ordered consumers, followers), and deleting them.
func (g *grants) reader(s string) {
	g.get(s)
	g.pub("$JS.API.CONSUMER.CREATE."+s, "$JS.API.CONSUMER.CREATE."+s+".>",
		"$JS.API.CONSUMER.DURABLE.CREATE."+s+".*",
		"$JS.API.CONSUMER.INFO."+s+".*", "$JS.API.CONSUMER.MSG.NEXT."+s+".*",
		"$JS.API.CONSUMER.DELETE."+s+".*", "$JS.ACK."+s+".>", "$JS.FC."+s+".>")
}

// durable grants the durable consumer name with filter on stream s: create
// or update it with exactly that filter, look it up, pull and ack.
func (g *grants) durable(s, name, filter string) {
	g.pub("$JS.API.CONSUMER.CREATE."+s+"."+name+"."+filter, "$JS.API.CONSUMER.INFO."+s+"."+name,
		"$JS.API.CONSUMER.MSG.NEXT."+s+"."+name, "$JS.ACK."+s+"."+name+".>")
}

// kv grants reading KV bucket b (get, list, watch) and, with write,
// putting, creating, updating and deleting its keys.
func (g *grants) kv(b string, write bool) {
	s := events.KVStream(b)
	g.info(s)
	g.reader(s)
	if write {
		g.pub(events.KVSubjects(b))
	}
}

// objects grants reading object store b and, with write, putting objects.
func (g *grants) objects(b string, write bool) {
	s := events.ObjectStream(b)
	g.info(s)
	g.create(s)
	g.reader(s)
	if write {
		g.pub(events.ObjectSubjects(b))
	}
}
