package orchestrator

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/resources"
)

const pdfSkill = "---\nname: pdf\ndescription: Work with PDF files\n---\n\nUse pdftotext.\n"

func (p *platform) resources() *resources.Store {
	p.t.Helper()
	s, err := resources.OpenStore(context.Background(), p.js, p.n)
	if err != nil {
		p.t.Fatal(err)
	}
	return s
}

// userFor is the user message command cmdID produced, or nil.
func userFor(es []events.Entry, cmdID string) *events.Message {
	for _, e := range es {
		if m := e.Message; m != nil && m.Role == events.RoleUser && m.CommandID == cmdID {
			return m
		}
	}
	return nil
}

func rejectionOf(es []events.Entry, cmdID string) *events.Entry {
	for i, e := range es {
		if e.Type == events.EntryCommandRejected && e.CommandID == cmdID {
			return &es[i]
		}
	}
	return nil
}

func resourceOf(t *testing.T, m *events.Message) resourceRef {
	t.Helper()
	var r resourceRef
	if err := json.Unmarshal(m.Extra[ExtraResource], &r); err != nil {
		t.Fatalf("message %+v has no resource member: %v", m, err)
	}
	return r
}

// A skill and a template run as prompts; their messages are pi's expansion
// and name the version they came from; an unknown name and another
// tenant's skill are refused, naming it.
func TestSkillAndTemplateCommands(t *testing.T) {
	p := newPlatform(t)
	store := p.resources()
	ctx := context.Background()
	skill, err := store.Put(ctx, "acme", resources.KindSkill, "pdf", pdfSkill)
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := store.Put(ctx, "acme", resources.KindTemplate, "review", "---\ndescription: Review\n---\nReview $1 with care: $@")
	if err != nil {
		t.Fatal(err)
	}
	p.startOrchestrator("o1")
	acme := events.SessionRef{Tenant: "acme", ID: "s1"}
	p.sendTo("acme", events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "s1", Tools: []string{}})
	p.sendTo("acme", events.Command{ID: "c2", Type: events.CmdSkill, SessionID: "s1", Name: "pdf", Text: "  report.pdf  "})
	es := p.waitLogOf(acme, "the skill's reply", func(es []events.Entry) bool { return userFor(es, "c2") != nil && lastText(es) == "ok" })
	m := userFor(es, "c2")
	want := "<skill name=\"pdf\" location=\".cairn/skills/pdf/SKILL.md\">\nReferences are relative to .cairn/skills/pdf.\n\nUse pdftotext.\n</skill>\n\nreport.pdf"
	if m.Content.Text() != want {
		t.Errorf("skill message %q, want %q", m.Content.Text(), want)
	}
	if r := resourceOf(t, m); r != (resourceRef{Kind: resources.KindSkill, Name: "pdf", Version: skill.Version}) {
		t.Errorf("skill message names %+v, want version %d", r, skill.Version)
	}

	p.sendTo("acme", events.Command{ID: "c3", Type: events.CmdPromptTemplate, SessionID: "s1", Name: "review", Args: []string{"main.go", "be strict"}})
	es = p.waitLogOf(acme, "the template's message", func(es []events.Entry) bool { return userFor(es, "c3") != nil })
	m = userFor(es, "c3")
	if got := m.Content.Text(); got != "Review main.go with care: main.go be strict" {
		t.Errorf("template message %q", got)
	}
	if r := resourceOf(t, m); r != (resourceRef{Kind: resources.KindTemplate, Name: "review", Version: tpl.Version}) {
		t.Errorf("template message names %+v, want version %d", r, tpl.Version)
	}

	// A new version is what the next command runs.
	v2, err := store.Put(ctx, "acme", resources.KindSkill, "pdf", strings.Replace(pdfSkill, "pdftotext", "qpdf", 1))
	if err != nil {
		t.Fatal(err)
	}
	p.sendTo("acme", events.Command{ID: "c4", Type: events.CmdSkill, SessionID: "s1", Name: "pdf", WhenBusy: events.BusyFollowUp})
	es = p.waitLogOf(acme, "the second skill message", func(es []events.Entry) bool { return userFor(es, "c4") != nil })
	if m := userFor(es, "c4"); resourceOf(t, m).Version != v2.Version || !strings.Contains(m.Content.Text(), "qpdf") ||
		strings.Contains(m.Content.Text(), "\n\n</skill>\n\n") {
		t.Errorf("after the update: %q %+v", m.Content.Text(), resourceOf(t, m))
	}

	p.sendTo("acme", events.Command{ID: "c5", Type: events.CmdSkill, SessionID: "s1", Name: "nope"})
	es = p.waitLogOf(acme, "the unknown skill refused", func(es []events.Entry) bool { return rejectionOf(es, "c5") != nil })
	if r := rejectionOf(es, "c5"); r.Code != codeInvalid || !strings.Contains(r.Reason, `no skill "nope"`) {
		t.Errorf("unknown skill: %s %q", r.Code, r.Reason)
	}

	beta := events.SessionRef{Tenant: "beta", ID: "s1"}
	p.sendTo("beta", events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "s1", Tools: []string{}})
	p.sendTo("beta", events.Command{ID: "c2", Type: events.CmdSkill, SessionID: "s1", Name: "pdf"})
	p.sendTo("beta", events.Command{ID: "c3", Type: events.CmdPromptTemplate, SessionID: "s1", Name: "review"})
	es = p.waitLogOf(beta, "beta's commands refused", func(es []events.Entry) bool {
		return rejectionOf(es, "c2") != nil && rejectionOf(es, "c3") != nil
	})
	if r := rejectionOf(es, "c2"); !strings.Contains(r.Reason, `no skill "pdf"`) {
		t.Errorf("beta ran acme's skill: %q", r.Reason)
	}
	if r := rejectionOf(es, "c3"); !strings.Contains(r.Reason, `no template "review"`) {
		t.Errorf("beta ran acme's template: %q", r.Reason)
	}
	if userFor(es, "c2") != nil || userFor(es, "c3") != nil {
		t.Error("beta's log holds a message of acme's resources")
	}
}
