package natstest

import (
	"context"
	"slices"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
)

// A provisioned server has exactly what provision.Config lists, with its
// configuration, under the names and options given.
func TestRunProvisionedHasWhatProductionHas(t *testing.T) {
	n := events.Names{Prefix: "acme"}
	opts := provision.Options{Partitions: 4, Pools: []string{"gpu"}}
	_, _, js := RunProvisioned(t, n, opts)
	ctx := context.Background()
	set, err := provision.Config(n, opts)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, c := range set.Streams {
		want = append(want, c.Name)
		s, err := js.Stream(ctx, c.Name)
		if err != nil {
			t.Fatalf("stream %s: %v", c.Name, err)
		}
		got := s.CachedInfo().Config
		if !slices.Equal(got.Subjects, c.Subjects) || got.Retention != c.Retention || got.MaxAge != c.MaxAge {
			t.Errorf("stream %s: %+v, want %+v", c.Name, got, c)
		}
	}
	for _, c := range set.KeyValues {
		want = append(want, events.KVStream(c.Bucket))
	}
	for _, c := range set.ObjectStores {
		want = append(want, events.ObjectStream(c.Bucket))
	}
	var have []string
	l := js.StreamNames(ctx)
	for name := range l.Name() {
		have = append(have, name)
	}
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	slices.Sort(have)
	if !slices.Equal(have, want) {
		t.Errorf("streams %v, want %v", have, want)
	}
	cmds, err := js.Stream(ctx, n.CommandsStream())
	if err != nil {
		t.Fatal(err)
	}
	if tr := cmds.CachedInfo().Config.SubjectTransform; tr == nil || tr.Destination != n.StoredCommands(4) {
		t.Errorf("commands transform %+v, want partitions 4 (%s)", tr, n.StoredCommands(4))
	}
	for _, c := range set.Consumers {
		if _, err := js.Consumer(ctx, c.Stream, c.Config.Durable); err != nil {
			t.Errorf("consumer %s on %s: %v", c.Config.Durable, c.Stream, err)
		}
	}
}
