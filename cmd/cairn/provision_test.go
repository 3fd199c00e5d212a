package main

import (
	"context"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Services started right after `cairn provision --replicas 3` must find every
// stream and bucket answering: provision returns only once each has a leader.
// It prints what it did to each object; run again it changes nothing.
func TestProvisionReturnsWhenEveryStreamHasALeader(t *testing.T) {
	c := natstest.RunCluster(t, 3)
	code, out, errOut := cairn(t, "provision", "--nats", c.URLs(), "--replicas", "3")
	if code != 0 {
		t.Fatalf("provision: exit %d\n%s%s", code, out, errOut)
	}
	for _, line := range []string{
		"created stream CAIRN_SESSIONS\n",
		"created stream CAIRN_COMPACTIONS\n",
		"created KV bucket cairn_leases\n",
		"created KV bucket cairn_outcomes\n",
		"created KV bucket cairn_keys\n",
		"created KV bucket cairn_resources\n",
		"created KV bucket cairn_extensions\n",
		"created object store cairn_blobs\n",
		"created object store cairn_snapshots\n",
		"created consumer compactor on CAIRN_COMPACTIONS\n",
		"created consumer toolrunner_default on CAIRN_TOOLS\n",
		"provisioned on " + c.URLs() + " with 3 replica(s)\n",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("provision printed\n%s\nwithout the line %q", out, line)
		}
	}
	nc, err := nats.Connect(c.URLs())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	n := 0
	for info := range js.ListStreams(ctx).Info() {
		n++
		if info.Config.Replicas != 3 {
			t.Errorf("stream %s has %d replicas, want 3", info.Config.Name, info.Config.Replicas)
		}
		if info.Cluster == nil || info.Cluster.Leader == "" {
			t.Errorf("stream %s has no leader right after provision returned", info.Config.Name)
		}
	}
	if n != 18 {
		t.Errorf("%d streams after provision, want every stream and bucket Cairn needs (18)", n)
	}

	code, out, errOut = cairn(t, "provision", "--nats", c.URLs(), "--replicas", "3", "--pools", "default,gpu")
	if code != 0 {
		t.Fatalf("provision again: exit %d\n%s%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 22 {
		t.Fatalf("second provision printed %d lines, want 21 objects and the summary:\n%s", len(lines), out)
	}
	for _, l := range lines[:21] {
		if !strings.HasPrefix(l, "unchanged ") && l != "created consumer toolrunner_gpu on CAIRN_TOOLS" {
			t.Errorf("second provision: %q, want every object unchanged but the new pool's consumer", l)
		}
	}
}

// A stream that cannot be brought to Cairn's configuration in place is an
// error naming it and the setting, and provision changes nothing.
func TestProvisionRefusesAnIncompatibleStream(t *testing.T) {
	s := natstest.RunServer(t)
	_, js := natstest.JetStream(t, s.Server)
	cfg := provision.CompactionsStream(events.Names{}, 1)
	cfg.Retention = jetstream.LimitsPolicy
	if _, err := js.CreateStream(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cairn(t, "provision", "--nats", s.ClientURL())
	if code == 0 || !strings.Contains(errOut, "stream CAIRN_COMPACTIONS has Retention Limits") || !strings.Contains(errOut, "nothing was changed") {
		t.Fatalf("provision over a limits CAIRN_COMPACTIONS: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if _, err := js.Stream(context.Background(), events.Names{}.SessionsStream()); err == nil {
		t.Error("provision created CAIRN_SESSIONS although it refused")
	}
}

func TestProvisionRejectsABadPool(t *testing.T) {
	code, _, errOut := cairn(t, "provision", "--nats", "nats://127.0.0.1:1", "--pools", "a.b")
	if code == 0 || !strings.Contains(errOut, `"a.b"`) {
		t.Fatalf("--pools a.b: exit %d, stderr %s", code, errOut)
	}
}

// --wait retries an unreachable cluster until it passes, then fails naming
// the last error; a negative wait is a usage error.
func TestProvisionWaitRetriesThenFails(t *testing.T) {
	code, _, stderr := runCairn(t, "provision", "--wait", "1500ms", "--nats", "nats://127.0.0.1:1")
	if code != 1 || !strings.Contains(stderr, "trying again") || !strings.Contains(stderr, "no servers available") {
		t.Fatalf("exit %d, stderr %q; want retries, then the connection error", code, stderr)
	}
	if code, _, stderr := runCairn(t, "provision", "--wait", "-1s"); code != 2 || !strings.Contains(stderr, "--wait") {
		t.Fatalf("negative wait: exit %d, %q", code, stderr)
	}
}
