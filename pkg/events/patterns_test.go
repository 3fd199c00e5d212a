package events_test

import (
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
)

// A prefix reaches every name and pattern; the zero value is "cairn".
func TestNamesUnderAPrefix(t *testing.T) {
	n := events.Names{Prefix: "acme"}
	got := map[string]string{
		n.SessionsStream():               "ACME_SESSIONS",
		n.LeasesBucket():                 "acme_leases",
		n.CheckpointsBucket():            "acme_checkpoints",
		n.SnapshotsBucket():              "acme_snapshots",
		n.ProjectorConsumer():            "acme-projector",
		n.PartitionCommands(3):           "acme.cmd.3.*",
		n.StoredCommandSubject(3, "s1"):  "acme.cmd.3.s1",
		n.StoredCommands(32):             "acme.cmd.{{partition(32,1)}}.{{wildcard(1)}}",
		events.KVStream(n.ToolsBucket()): "KV_acme_tools",
		n.BudgetUseBucket():              "acme_budget_use",
		events.KVSubject(n.OutcomesBucket(), events.OutcomeKey("s1", "c1")): "$KV.acme_outcomes.s1.c1",
		events.ObjectStream(n.BlobsBucket()):                                "OBJ_acme_blobs",
		events.Names{}.ToolPoolConsumer("gpu"):                              "toolrunner_gpu",
		events.Names{}.CompactorConsumer():                                  "compactor",
	}
	for have, want := range got {
		if have != want {
			t.Errorf("got %q, want %q", have, want)
		}
	}
	all := n.Patterns().All()
	if len(all) != 17 {
		t.Fatalf("%d patterns, want one per stream and bucket (17): %v", len(all), all)
	}
	for _, p := range all {
		if !strings.HasPrefix(p, "acme.") && !strings.HasPrefix(p, "$KV.acme_") && !strings.HasPrefix(p, "$O.acme_") {
			t.Errorf("pattern %q is not under the prefix", p)
		}
	}
	if p := (events.Names{}).Patterns(); p.Sessions != "cairn.session.*" || p.LeasesKV != "$KV.cairn_leases.>" || p.Snapshots != "$O.cairn_snapshots.>" {
		t.Errorf("default patterns %+v", p)
	}
}
