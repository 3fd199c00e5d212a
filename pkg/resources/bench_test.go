package resources_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/resources"
)

// The cost of a system prompt per turn, in its two parts: reading the
// tenant's skills from NATS (Store.All) and rendering the prompt (Build),
// for a tenant with 50 skills.
func BenchmarkSystemPrompt(b *testing.B) {
	_, _, js := natstest.RunProvisioned(b, events.Names{}, provision.Options{})
	ctx := context.Background()
	s, err := resources.OpenStore(ctx, js, events.Names{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 50 {
		name := fmt.Sprintf("skill-%02d", i)
		if _, err := s.Put(ctx, "acme", resources.KindSkill, name,
			"---\ndescription: Does thing number "+name+" with <care> & rigour\n---\nBody of "+name+"\n"); err != nil {
			b.Fatal(err)
		}
	}
	all, err := s.All(ctx, "acme", resources.KindSkill)
	if err != nil || len(all) != 50 {
		b.Fatalf("%d skills, %v", len(all), err)
	}
	listed := make([]resources.Listed, len(all))
	for i, r := range all {
		listed[i] = resources.Listed{Name: r.Name, Description: r.Description, Location: "/skills/" + r.Name + "/SKILL.md"}
	}
	p := resources.SystemPrompt{Base: "You are a coding agent.", Append: "Tenant rules.", Skills: listed,
		Tools: []string{"read", "bash", "edit", "write"}, Date: "2026-12-01", Cwd: "/w/s1"}
	b.Run("build", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_ = resources.Build(p)
		}
	})
	b.Run("read-50-skills", func(b *testing.B) {
		for range b.N {
			if _, err := s.All(ctx, "acme", resources.KindSkill); err != nil {
				b.Fatal(err)
			}
		}
	})
}
