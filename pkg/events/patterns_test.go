package events_test

import (
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
)

// A prefix reaches every name and pattern; the zero value is "cairn".
func TestNamesUnderAPrefix(t *testing.T) {
	n := events.Names{Prefix: "acme"}
	beta := events.SessionRef{Tenant: "beta", ID: "s1"}
	got := map[string]string{
		n.SessionsStream():                   "ACME_SESSIONS",
		n.LeasesBucket():                     "acme_leases",
		n.CheckpointsBucket():                "acme_checkpoints",
		n.SnapshotsBucket():                  "acme_snapshots",
		n.ProjectorConsumer():                "acme-projector",
		n.PartitionCommands(3):               "acme.cmd.3.*.*",
		n.StoredCommandSubject(3, beta):      "acme.cmd.3.beta.s1",
		n.StoredCommands(32):                 "acme.cmd.{{partition(32,1,2)}}.{{wildcard(1)}}.{{wildcard(2)}}",
		n.SessionSubject(beta):               "acme.session.beta.s1",
		n.CommandSubject(beta):               "acme.cmd.beta.s1",
		n.EventSubject(beta):                 "acme.events.beta.s1",
		n.ResultSubject(beta):                "acme.result.beta.s1",
		n.CompactionSubject(beta):            "acme.compact.beta.s1",
		n.CancelSubject(beta):                "acme.cancel.beta.s1",
		n.ToolSubject("gpu", "beta", "bash"): "acme.tool.gpu.beta.bash",
		n.PoolTenantTools("gpu", "beta"):     "acme.tool.gpu.beta.>",
		n.TenantPatterns("beta").Sessions:    "acme.session.beta.*",
		events.MsgID(beta, "e1"):             "beta.s1.e1",
		events.KVStream(n.ToolsBucket()):     "KV_acme_tools",
		n.BudgetUseBucket():                  "acme_budget_use",
		n.ResourcesBucket():                  "acme_resources",
		events.KVSubject(n.ResourcesBucket(), events.ResourceKey("beta", "skill", "pdf")): "$KV.acme_resources.beta.skill.pdf",
		events.KVSubject(n.OutcomesBucket(), events.OutcomeKey(beta, "c1")):               "$KV.acme_outcomes.beta.s1.c1",
		events.ObjectStream(n.BlobsBucket()):                                              "OBJ_acme_blobs",
		events.Names{}.ToolPoolConsumer("gpu"):                                            "toolrunner_gpu",
		events.Names{}.CompactorConsumer():                                                "compactor",
	}
	for have, want := range got {
		if have != want {
			t.Errorf("got %q, want %q", have, want)
		}
	}
	all := n.Patterns().All()
	if len(all) != 21 {
		t.Fatalf("%d patterns, want one per stream, bucket and core subject family (21): %v", len(all), all)
	}
	for _, p := range all {
		if !strings.HasPrefix(p, "acme.") && !strings.HasPrefix(p, "$KV.acme_") && !strings.HasPrefix(p, "$O.acme_") {
			t.Errorf("pattern %q is not under the prefix", p)
		}
	}
	if p := (events.Names{}).Patterns(); p.Sessions != "cairn.session.*.*" || p.LeasesKV != "$KV.cairn_leases.>" || p.Snapshots != "$O.cairn_snapshots.>" {
		t.Errorf("default patterns %+v", p)
	}
}
