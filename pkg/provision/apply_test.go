package provision_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/compactbus"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/cairn-agents/cairn/pkg/toolbus"
	"github.com/nats-io/nats.go/jetstream"
)

// startLikeServices creates every stream and bucket R1 the way the services
// do when they start before `cairn provision`, and the shared consumers with
// the AckWait a service was given.
func startLikeServices(t *testing.T, ctx context.Context, js jetstream.JetStream, ackWait time.Duration) {
	t.Helper()
	n := events.Names{}
	if _, err := session.NewJetStreamLog(ctx, js); err != nil {
		t.Fatal(err)
	}
	if err := toolbus.Provision(ctx, js, n, toolbus.ProvisionOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := compactbus.Provision(ctx, js, n, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, provision.CommandsStream(n, provision.DefaultPartitions, 1, provision.CommandsMaxAge)); err != nil {
		t.Fatal(err)
	}
	// the budget, keys, resources and extensions buckets are the orchestrator's and the gateway's
	for _, cfg := range append(provision.OrchestratorBuckets(n, 1, 10*time.Second), append(provision.BudgetBuckets(n, 1), provision.KeysBucket(n, 1), provision.ResourcesBucket(n, 1), provision.ExtensionsBucket(n, 1))...) {
		if _, err := js.CreateKeyValue(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := js.CreateOrUpdateConsumer(ctx, n.CompactionsStream(), provision.CompactorConsumer(n, ackWait)); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateOrUpdateConsumer(ctx, n.ToolsStream(), provision.ToolPoolConsumer(n, "default", ackWait)); err != nil {
		t.Fatal(err)
	}
}

// streamStates is every stream's configuration and creation time by name.
func streamStates(t *testing.T, ctx context.Context, js jetstream.JetStream) map[string]*jetstream.StreamInfo {
	t.Helper()
	got := map[string]*jetstream.StreamInfo{}
	l := js.ListStreams(ctx)
	for info := range l.Info() {
		got[info.Config.Name] = info
	}
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// settledStreams reads each named stream once its replicas have settled (a
// leader, and every other replica placed): right after a scale-up the
// cluster answers a listing without a stream whose group is still forming.
// It fails the test if one does not settle before ctx ends.
func settledStreams(t *testing.T, ctx context.Context, js jetstream.JetStream, names []string) map[string]*jetstream.StreamInfo {
	t.Helper()
	got := map[string]*jetstream.StreamInfo{}
	for _, name := range names {
		for {
			s, err := js.Stream(ctx, name)
			if err == nil {
				info := s.CachedInfo()
				if ci := info.Cluster; ci != nil && ci.Leader != "" && len(ci.Replicas) == info.Config.Replicas-1 {
					got[name] = info
					break
				}
				err = fmt.Errorf("cluster %+v", info.Cluster)
			}
			if ctx.Err() != nil {
				t.Fatalf("stream %s did not settle: %v", name, err)
			}
			poll(ctx)
		}
	}
	return got
}

// settledConsumer reads a consumer once it has a leader and want other
// replicas, failing the test if that does not happen before ctx ends.
func settledConsumer(t *testing.T, ctx context.Context, js jetstream.JetStream, stream, name string, want int) *jetstream.ConsumerInfo {
	t.Helper()
	for {
		cons, err := js.Consumer(ctx, stream, name)
		if err == nil {
			info := cons.CachedInfo()
			if ci := info.Cluster; ci != nil && ci.Leader != "" && len(ci.Replicas) == want {
				return info
			}
			err = fmt.Errorf("cluster %+v, want a leader and %d other replicas like its stream", info.Cluster, want)
		}
		if ctx.Err() != nil {
			t.Fatalf("consumer %s on %s: %v", name, stream, err)
		}
		poll(ctx)
	}
}

// poll waits a little before the next look, or until ctx ends.
func poll(ctx context.Context) {
	t := time.NewTimer(50 * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// Services that start before `cairn provision` create everything R1; one
// lost node then stalls whatever lived on it. Provision with 3 replicas must
// raise every stream, KV bucket and object store to R3, keep what the
// services own (AckWait, the lease TTL), and create the consumers of the
// pools no worker has started yet; a second run changes nothing.
func TestApplyRaisesWhatServicesCreatedToR3(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := natstest.RunCluster(t, 3)
	_, js := c.JetStream()
	startLikeServices(t, ctx, js, 2*time.Minute)

	report, err := provision.Apply(ctx, js, events.Names{}, provision.Options{Replicas: 3, Pools: []string{"default", "gpu"}})
	if err != nil {
		t.Fatalf("apply: %v\nreport so far:\n%s", err, lines(report))
	}
	for _, ch := range report {
		switch {
		case ch.Kind == provision.KindConsumer && ch.Name == "toolrunner_gpu on CAIRN_TOOLS":
			if ch.Action != provision.Created {
				t.Errorf("%s: want created (no gpu worker has started)", ch)
			}
		case ch.Kind == provision.KindConsumer:
			if ch.Action != provision.Unchanged {
				t.Errorf("%s: want unchanged (the service created it with the same config)", ch)
			}
		default:
			if ch.Action != provision.Updated || !slices.Contains(ch.Fields, provision.Field{Name: "Replicas", Was: "1", Now: "3"}) {
				t.Errorf("%s: want updated with Replicas 1 -> 3", ch)
			}
		}
	}
	want := []string{"CAIRN_SESSIONS", "CAIRN_COMMANDS", "CAIRN_TOOLS", "CAIRN_RESULTS", "CAIRN_EVENTS", "CAIRN_COMPACTIONS",
		"KV_cairn_tools", "KV_cairn_toolstarts", "KV_cairn_leases", "KV_cairn_checkpoints", "KV_cairn_outcomes", "KV_cairn_budgets", "KV_cairn_budget_use", "KV_cairn_keys", "KV_cairn_resources", "KV_cairn_extensions", "OBJ_cairn_blobs", "OBJ_cairn_snapshots"}
	states := settledStreams(t, ctx, js, want)
	if all := streamStates(t, ctx, js); len(all) > len(want) {
		t.Errorf("%d streams, want %d: %v", len(all), len(want), slices.Collect(maps.Keys(all)))
	}
	for _, name := range want {
		info := states[name]
		if info.Config.Replicas != 3 {
			t.Errorf("stream %s has %d replicas after provision --replicas 3", name, info.Config.Replicas)
		}
	}
	if len(report) != len(want)+3 {
		t.Errorf("report has %d lines, want %d (one per object):\n%s", len(report), len(want)+3, lines(report))
	}
	if ttl := states["KV_cairn_leases"].Config.MaxAge; ttl != 10*time.Second {
		t.Errorf("leases TTL is %s; the orchestrator's 10s must be kept", ttl)
	}
	n := events.Names{}
	for _, cs := range []struct{ stream, name string }{{"CAIRN_COMPACTIONS", n.CompactorConsumer()},
		{"CAIRN_TOOLS", n.ToolPoolConsumer("default")}, {"CAIRN_TOOLS", n.ToolPoolConsumer("gpu")}} {
		info := settledConsumer(t, ctx, js, cs.stream, cs.name, 2)
		if cs.name != n.ToolPoolConsumer("gpu") && info.Config.AckWait != 2*time.Minute {
			t.Errorf("consumer %s: AckWait %s; the service's 2m must be kept", cs.name, info.Config.AckWait)
		}
	}

	// Again: everything unchanged, and nothing touched.
	again, err := provision.Apply(ctx, js, events.Names{}, provision.Options{Replicas: 3, Pools: []string{"default", "gpu"}})
	if err != nil {
		t.Fatal(err)
	}
	if n := again.Count(provision.Unchanged); n != len(again) || n != len(report) {
		t.Errorf("second run: %d of %d unchanged, want all %d:\n%s", n, len(again), len(report), lines(again))
	}
	after := settledStreams(t, ctx, js, want)
	for name, info := range states {
		if !after[name].Created.Equal(info.Created) || after[name].Config.Replicas != info.Config.Replicas ||
			after[name].Config.MaxAge != info.Config.MaxAge {
			t.Errorf("stream %s changed on the second run: %+v -> %+v", name, info.Config, after[name].Config)
		}
	}
}

// Provisioning an empty server creates everything; a second run reports
// every object unchanged.
func TestApplyCreatesEverythingThenChangesNothing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, js := natstest.JetStream(t, natstest.RunServer(t).Server)
	first, err := provision.Apply(ctx, js, events.Names{}, provision.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := first.Count(provision.Created); n != len(first) || n != 20 {
		t.Errorf("first run: %d of %d created, want 20:\n%s", n, len(first), lines(first))
	}
	before := streamStates(t, ctx, js)
	second, err := provision.Apply(ctx, js, events.Names{}, provision.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := second.Count(provision.Unchanged); n != len(second) || n != 20 {
		t.Errorf("second run: %d of %d unchanged, want 20:\n%s", n, len(second), lines(second))
	}
	after := streamStates(t, ctx, js)
	if len(after) != len(before) {
		t.Errorf("%d streams before the second run, %d after", len(before), len(after))
	}
	for name, info := range before {
		if a := after[name]; a == nil || !a.Created.Equal(info.Created) || a.State.Msgs != info.State.Msgs {
			t.Errorf("stream %s changed on the second run", name)
		}
	}
	// A setting changed by hand is put back and reported.
	cfg := before["CAIRN_EVENTS"].Config
	cfg.MaxAge = 3 * time.Hour
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	third, err := provision.Apply(ctx, js, events.Names{}, provision.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := lines(third), "updated stream CAIRN_EVENTS: MaxAge 3h0m0s -> 1h0m0s"; !strings.Contains(got, want) || third.Count(provision.Updated) != 1 {
		t.Errorf("after a hand edit of CAIRN_EVENTS' max age the report says\n%s\nwant one update: %s", got, want)
	}
}

// An existing stream whose retention, storage or partitions differ cannot be
// updated in place: Apply names the stream and the setting and changes
// nothing at all.
func TestApplyRefusesIncompatibleStreams(t *testing.T) {
	n := events.Names{}
	cases := []struct {
		name   string
		stream jetstream.StreamConfig
		field  string
	}{
		{"compactions with limits retention", func() jetstream.StreamConfig {
			c := provision.CompactionsStream(n, 1)
			c.Retention = jetstream.LimitsPolicy
			return c
		}(), "Retention"},
		{"sessions in memory", func() jetstream.StreamConfig {
			c := provision.SessionsStream(n, 1)
			c.Storage = jetstream.MemoryStorage
			return c
		}(), "Storage"},
		{"commands with 4 partitions", provision.CommandsStream(n, 4, 1, provision.CommandsMaxAge), "SubjectTransform"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, js := natstest.JetStream(t, natstest.RunServer(t).Server)
			if _, err := js.CreateStream(ctx, tc.stream); err != nil {
				t.Fatal(err)
			}
			before := streamStates(t, ctx, js)
			report, err := provision.Apply(ctx, js, n, provision.Options{})
			var ie *provision.IncompatibleError
			if !errors.Is(err, provision.ErrIncompatible) || !errors.As(err, &ie) {
				t.Fatalf("apply: %v, want an IncompatibleError", err)
			}
			if ie.Name != tc.stream.Name || ie.Field != tc.field {
				t.Errorf("error names %s %s, want %s %s", ie.Name, ie.Field, tc.stream.Name, tc.field)
			}
			if !strings.Contains(err.Error(), tc.stream.Name) || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error %q does not name the stream and the field", err)
			}
			if len(report) != 0 {
				t.Errorf("report after a refusal: %v", report)
			}
			after := streamStates(t, ctx, js)
			if len(after) != 1 || after[tc.stream.Name].Config.Retention != before[tc.stream.Name].Config.Retention {
				t.Errorf("Apply changed things before refusing: %d streams now", len(after))
			}
		})
	}
}

func TestApplyRejectsBadOptions(t *testing.T) {
	_, js := natstest.JetStream(t, natstest.RunServer(t).Server)
	for _, o := range []provision.Options{{Replicas: 6}, {Replicas: -1}, {Pools: []string{"a.b"}}, {Pools: []string{""}}, {Partitions: -1}, {Partitions: 4097}} {
		_, err := provision.Apply(context.Background(), js, events.Names{}, o)
		if !errors.Is(err, events.ErrInvalid) {
			t.Errorf("options %+v: %v, want a field error", o, err)
		}
	}
	if l := streamStates(t, context.Background(), js); len(l) != 0 {
		t.Errorf("bad options created %d streams", len(l))
	}
}

func lines(r provision.Report) string {
	var b strings.Builder
	for _, c := range r {
		b.WriteString(c.String() + "\n")
	}
	return b.String()
}
