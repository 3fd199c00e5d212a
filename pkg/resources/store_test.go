package resources_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/resources"
)

func TestMain(m *testing.M) { kittest.Main(m, nil) }

const pdf = "---\nname: pdf\ndescription: Work with PDF files\n---\n\nUse pdftotext.\n"

func TestStoreVersionsAndTenants(t *testing.T) {
	_, _, js := natstest.RunProvisioned(t, events.Names{}, provision.Options{})
	ctx := context.Background()
	s, err := resources.OpenStore(ctx, js, events.Names{})
	if err != nil {
		t.Fatal(err)
	}
	v1, err := s.Put(ctx, "acme", resources.KindSkill, "pdf", pdf)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := s.Put(ctx, "acme", resources.KindSkill, "pdf", strings.Replace(pdf, "pdftotext", "qpdf", 1))
	if err != nil {
		t.Fatal(err)
	}
	if v2.Version <= v1.Version || v2.Description != "Work with PDF files" {
		t.Fatalf("v1 %+v v2 %+v", v1, v2)
	}
	got, err := s.Get(ctx, "acme", resources.KindSkill, "pdf")
	if err != nil || got.Version != v2.Version || !strings.Contains(got.Text, "qpdf") {
		t.Fatalf("get %+v %v", got, err)
	}
	old, err := s.GetVersion(ctx, "acme", resources.KindSkill, "pdf", v1.Version)
	if err != nil || !strings.Contains(old.Text, "pdftotext") {
		t.Fatalf("version %d: %+v %v", v1.Version, old, err)
	}
	// Another tenant sees nothing of acme's.
	if _, err := s.Get(ctx, "other", resources.KindSkill, "pdf"); !errors.Is(err, resources.ErrNotFound) {
		t.Fatalf("other tenant: %v", err)
	}
	if _, err := s.GetVersion(ctx, "other", resources.KindSkill, "pdf", v1.Version); !errors.Is(err, resources.ErrNotFound) {
		t.Fatalf("other tenant's version: %v", err)
	}
	if l, err := s.List(ctx, "other", resources.KindSkill); err != nil || len(l) != 0 {
		t.Fatalf("other tenant's list: %+v %v", l, err)
	}
	if err := s.Delete(ctx, "other", resources.KindSkill, "pdf"); !errors.Is(err, resources.ErrNotFound) {
		t.Fatalf("other tenant's delete: %v", err)
	}
	// Kinds are apart: a template of the same name is another resource.
	if _, err := s.Put(ctx, "acme", resources.KindTemplate, "pdf", "Summarise $1"); err != nil {
		t.Fatal(err)
	}
	l, err := s.List(ctx, "acme", resources.KindSkill)
	if err != nil || len(l) != 1 || l[0].Name != "pdf" || l[0].Text != "" || l[0].Version != v2.Version {
		t.Fatalf("list %+v %v", l, err)
	}
	if err := s.Delete(ctx, "acme", resources.KindSkill, "pdf"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "acme", resources.KindSkill, "pdf"); !errors.Is(err, resources.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	if tl, err := s.All(ctx, "acme", resources.KindTemplate); err != nil || len(tl) != 1 || tl[0].Text != "Summarise $1" {
		t.Fatalf("templates %+v %v", tl, err)
	}
	// Refused before anything is stored.
	for _, bad := range []struct {
		tenant, name, text, want string
	}{
		{"acme", "x", "no front matter", "line 1: no front matter"},
		{"Acme", "pdf", pdf, "tenant"},
		{"acme", "a.b", pdf, "name contains invalid characters"},
		{"acme", "*", pdf, "name contains invalid characters"},
	} {
		if _, err := s.Put(ctx, bad.tenant, resources.KindSkill, bad.name, bad.text); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("put %+v: %v, want %q", bad, err, bad.want)
		}
	}
}
