package resources_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/resources"
)

// The copy starts with what is stored, follows puts and deletes, and keeps
// tenants apart.
func TestCacheFollowsTheBucket(t *testing.T) {
	_, _, js := natstest.RunProvisioned(t, events.Names{}, provision.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := resources.OpenStore(ctx, js, events.Names{})
	if err != nil {
		t.Fatal(err)
	}
	v1, err := s.Put(ctx, "acme", resources.KindSkill, "pdf", pdf)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.WatchCache(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.Get("acme", resources.KindSkill, "pdf"); err != nil || got.Version != v1.Version || got.Text != pdf {
		t.Fatalf("initial copy: %+v %v", got, err)
	}
	if _, err := c.Get("other", resources.KindSkill, "pdf"); !errors.Is(err, resources.ErrNotFound) {
		t.Fatalf("another tenant sees acme's skill: %v", err)
	}
	changed := make(chan string, 8)
	c.OnChange(func(tenant string) { changed <- tenant })
	v2, err := s.Put(ctx, "acme", resources.KindSkill, "pdf", strings.Replace(pdf, "pdftotext", "qpdf", 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Sync(ctx, v2.Version); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.Get("acme", resources.KindSkill, "pdf"); got.Version != v2.Version || !strings.Contains(got.Text, "qpdf") {
		t.Fatalf("after the put: %+v", got)
	}
	if tenant := <-changed; tenant != "acme" {
		t.Fatalf("change for %q", tenant)
	}
	tpl, err := s.Put(ctx, "acme", resources.KindTemplate, "review", "Review $1")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "acme", resources.KindSkill, "pdf"); err != nil {
		t.Fatal(err)
	}
	<-changed // the template
	<-changed // the delete
	if _, err := c.Get("acme", resources.KindSkill, "pdf"); !errors.Is(err, resources.ErrNotFound) {
		t.Fatalf("deleted skill still in the copy: %v", err)
	}
	if all := c.All("acme", resources.KindTemplate); len(all) != 1 || all[0].Version != tpl.Version {
		t.Fatalf("templates %+v", all)
	}
}
