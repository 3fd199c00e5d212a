package provision_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or writes it there with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from what Cairn provisioned before; got:\n%s", path, got)
	}
}

// Every stream, bucket and consumer configuration is pinned byte for byte:
// moving where a name or a setting is written must not change what is
// provisioned (under the default prefix and another, single node and R3).
func TestConfigGolden(t *testing.T) {
	cases := []struct {
		file  string
		names events.Names
		opts  provision.Options
	}{
		{"config-default.json", events.Names{}, provision.Options{}},
		{"config-acme-r3.json", events.Names{Prefix: "acme"}, provision.Options{Replicas: 3, Pools: []string{"default", "gpu"}}},
	}
	for _, tc := range cases {
		set, err := provision.Config(tc.names, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.MarshalIndent(set, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		golden(t, tc.file, append(b, '\n'))
	}
}

// What `cairn provision` prints on a new server is pinned too.
func TestApplyReportGolden(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, js := natstest.JetStream(t, natstest.RunServer(t).Server)
	report, err := provision.Apply(ctx, js, events.Names{}, provision.Options{Pools: []string{"default", "gpu"}})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "apply-report.txt", []byte(lines(report)))
}

// Every subject a stream Cairn provisions stores, and every bucket, is
// covered by one of events.Names.Patterns, so a permission list built from
// them misses nothing.
func TestPatternsCoverEveryStreamAndBucket(t *testing.T) {
	n := events.Names{Prefix: "acme"}
	set, err := provision.Config(n, provision.Options{})
	if err != nil {
		t.Fatal(err)
	}
	all := n.Patterns().All()
	covered := func(s string) bool { return slices.Contains(all, s) }
	for _, c := range set.Streams {
		for _, s := range c.Subjects {
			if !covered(s) {
				t.Errorf("stream %s subject %s: no pattern", c.Name, s)
			}
		}
	}
	for _, c := range set.KeyValues {
		if !covered(events.KVSubjects(c.Bucket)) {
			t.Errorf("KV bucket %s: no pattern", c.Bucket)
		}
	}
	for _, c := range set.ObjectStores {
		if !covered(events.ObjectSubjects(c.Bucket)) {
			t.Errorf("object store %s: no pattern", c.Bucket)
		}
	}
}
