package orchestrator

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/scripted"
	"github.com/cairn-agents/cairn/pkg/resources"
	"github.com/cairn-agents/cairn/pkg/tool"
	"github.com/cairn-agents/cairn/pkg/toolbus"
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

// gate is a tool whose call waits until the test lets it go.
type gate struct{ entered, release chan struct{} }

func (gate) Spec() events.ToolSpec {
	return events.ToolSpec{Name: "gate", Description: "waits", Parameters: json.RawMessage(`{"type":"object"}`), Idempotent: true}
}

func (g gate) Execute(ctx context.Context, _ tool.Call, _ func(tool.Result)) (tool.Result, error) {
	g.entered <- struct{}{}
	select {
	case <-g.release:
	case <-ctx.Done():
		return tool.Result{}, ctx.Err()
	}
	return tool.Result{Content: []events.Block{events.TextBlock("open")}}, nil
}

// sysRecording resolves like scriptedModels and keeps every request's system
// prompt.
type sysRecording struct {
	scriptedModels
	mu      sync.Mutex
	prompts map[string][]string // by the request's last user text
}

func (r *sysRecording) Resolve(ref string) (llm.Provider, llm.Model, error) {
	p, m, err := r.scriptedModels.Resolve(ref)
	if err != nil {
		return nil, m, err
	}
	return promptRecorder{p, r}, m, nil
}

type promptRecorder struct {
	p llm.Provider
	r *sysRecording
}

func (rp promptRecorder) Stream(ctx context.Context, req *llm.Request, onDelta func(events.Delta)) (events.Message, error) {
	key := ""
	for _, m := range req.Messages {
		if m.Role == events.RoleUser {
			key = m.Content.Text()
		}
	}
	rp.r.mu.Lock()
	rp.r.prompts[key] = append(rp.r.prompts[key], req.SystemPrompt)
	rp.r.mu.Unlock()
	return rp.p.Stream(ctx, req, onDelta)
}

func (r *sysRecording) of(userText string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.prompts[userText]...)
}

// The system prompt is built at every save point: a skill updated while a
// turn runs is in the next request of the run, not in the one in flight;
// it lists only the tenant's own skills, and only with the read tool.
func TestSystemPromptFollowsSkillsAtSavePoints(t *testing.T) {
	p := newPlatform(t)
	store := p.resources()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	v1, err := store.Put(ctx, "acme", resources.KindSkill, "pdf", pdfSkill)
	if err != nil {
		t.Fatal(err)
	}
	g := gate{entered: make(chan struct{}, 1), release: make(chan struct{})}
	bus, err := toolbus.New(p.nc, p.n)
	if err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithCancel(context.Background())
	srv, err := bus.Start(wctx, toolbus.Worker{Pool: "gate", Tools: []tool.Tool{g}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wcancel(); _ = srv.Wait() })
	sc, err := scripted.Parse([]byte(`{"rules": [
	  {"match": {"lastRole": "user", "contains": "gate please"}, "reply": {"toolCalls": [{"name": "gate", "arguments": {}}]}},
	  {"match": {"lastRole": "toolResult", "tool": "gate"}, "reply": {"text": "gated"}},
	  {"reply": {"text": "ok"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	rec := &sysRecording{scriptedModels: scriptedModels{scripted.New(sc)}, prompts: map[string][]string{}}
	o, err := New(Config{Conn: p.nc, Log: p.log, Instance: "o1", Partitions: 4, LeaseTTL: testLeaseTTL,
		Models: rec, DefaultModel: "scripted/test", Logger: failOnRefusedMove(t)})
	if err != nil {
		t.Fatal(err)
	}
	kittest.Run(t, context.Background(), "orchestrator", o.Run)

	acme := events.SessionRef{Tenant: "acme", ID: "s1"}
	p.sendTo("acme", events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "s1", SystemPrompt: "Base prompt.", Tools: []string{"read", "gate"}})
	p.sendTo("acme", events.Command{ID: "c2", Type: events.CmdPrompt, SessionID: "s1", Text: "gate please"})
	select {
	case <-g.entered:
	case <-ctx.Done():
		t.Fatal("the gate tool was never called")
	}
	v2, err := store.Put(ctx, "acme", resources.KindSkill, "pdf", strings.Replace(pdfSkill, "Work with PDF files", "Edit PDF files", 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := o.resCache.Sync(ctx, v2.Version); err != nil {
		t.Fatal(err)
	}
	close(g.release)
	p.waitLogOf(acme, "the gated reply", func(es []events.Entry) bool { return lastText(es) == "gated" })
	got := rec.of("gate please")
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2: %q", len(got), got)
	}
	for i, want := range []string{"Work with PDF files", "Edit PDF files"} {
		sp := got[i]
		if !strings.HasPrefix(sp, "Base prompt.") || !strings.Contains(sp, "<name>pdf</name>") ||
			!strings.Contains(sp, "<description>"+want+"</description>") ||
			!strings.Contains(sp, "<location>.cairn/skills/pdf/SKILL.md</location>") ||
			!strings.HasSuffix(sp, "\nCurrent working directory: s1") {
			t.Errorf("request %d (skill v%d then v%d) system prompt:\n%s\nwant the description %q", i, v1.Version, v2.Version, sp, want)
		}
	}

	// The log says what each request was told, and by which versions.
	es := p.waitLogOf(acme, "the gated reply", func(es []events.Entry) bool { return lastText(es) == "gated" })
	var recs []events.SystemPromptRecord
	for i := range es {
		if r, ok, err := events.DecodeSystemPrompt(&es[i]); err != nil {
			t.Fatal(err)
		} else if ok {
			recs = append(recs, r)
		}
	}
	if len(recs) != 2 {
		t.Fatalf("%d system prompt records, want 2 (one per prompt sent): %+v", len(recs), recs)
	}
	for i, v := range []uint64{v1.Version, v2.Version} {
		r := recs[i]
		if r.Text != got[i] || r.Digest != events.PromptDigest(got[i]) || len(r.Resources) != 1 ||
			r.Resources[0] != (events.ResourceVersion{Kind: "skill", Name: "pdf", Version: v}) {
			t.Errorf("record %d = %+v, want the prompt sent with skill pdf at version %d", i, r, v)
		}
	}

	// Without the read tool the skills are not listed; another tenant
	// never sees acme's.
	p.sendTo("acme", events.Command{ID: "c3", Type: events.CmdSetTools, SessionID: "s1", Tools: []string{"gate"}})
	p.sendTo("acme", events.Command{ID: "c4", Type: events.CmdPrompt, SessionID: "s1", Text: "no read"})
	p.waitLogOf(acme, "the reply without read", func(es []events.Entry) bool { return userFor(es, "c4") != nil && lastText(es) == "ok" })
	if sp := rec.of("no read"); len(sp) != 1 || strings.Contains(sp[0], "pdf") || !strings.HasPrefix(sp[0], "Base prompt.\nCurrent date: ") {
		t.Errorf("without read: %q", sp)
	}
	es = p.waitLogOf(acme, "the reply without read", func(es []events.Entry) bool { return lastText(es) == "ok" })
	if r, ok, err := events.LastSystemPrompt(es); err != nil || !ok || r.Text != rec.of("no read")[0] || len(r.Resources) != 0 {
		// A prompt that lists no skill was built from none.
		t.Errorf("the last record = %+v, %v, %v; want the prompt without skills", r, ok, err)
	}
	beta := events.SessionRef{Tenant: "beta", ID: "s1"}
	p.sendTo("beta", events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "s1", SystemPrompt: "Beta.", Tools: []string{"read"}})
	p.sendTo("beta", events.Command{ID: "c2", Type: events.CmdPrompt, SessionID: "s1", Text: "beta asks"})
	p.waitLogOf(beta, "beta's reply", func(es []events.Entry) bool { return lastText(es) == "ok" })
	if sp := rec.of("beta asks"); len(sp) != 1 || strings.Contains(sp[0], "pdf") || strings.Contains(sp[0], "<available_skills>") {
		t.Errorf("beta's system prompt: %q", sp)
	}
}

// A read of a listed skill's location is answered by the orchestrator from
// the tenant's skills, as read answers a file (its line window too); a
// path under .cairn/skills that names no skill of the tenant goes to the
// toolrunners like any other, and another tenant's skill is not served.
func TestReadOfAListedSkill(t *testing.T) {
	p := newPlatform(t)
	store := p.resources()
	ctx := context.Background()
	if _, err := store.Put(ctx, "acme", resources.KindSkill, "pdf", pdfSkill); err != nil {
		t.Fatal(err)
	}
	sc, err := scripted.Parse([]byte(`{"rules": [
	  {"match": {"lastRole": "user", "contains": "load pdf"}, "reply": {"toolCalls": [{"name": "read", "arguments": {"path": "./.cairn/skills/x/../pdf/SKILL.md", "offset": 5}}]}},
	  {"match": {"lastRole": "user", "contains": "load nope"}, "reply": {"toolCalls": [{"name": "read", "arguments": {"path": ".cairn/skills/nope/SKILL.md"}}]}},
	  {"match": {"lastRole": "toolResult"}, "reply": {"text": "loaded"}},
	  {"reply": {"text": "ok"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	o, err := New(Config{Conn: p.nc, Log: p.log, Instance: "o1", Partitions: 4, LeaseTTL: testLeaseTTL,
		Models: scriptedModels{scripted.New(sc)}, DefaultModel: "scripted/test", Logger: failOnRefusedMove(t)})
	if err != nil {
		t.Fatal(err)
	}
	kittest.Run(t, context.Background(), "orchestrator", o.Run) // its copy of the skills starts with pdf
	result := func(es []events.Entry, n int) *events.Message {
		for i := range es {
			if m := es[i].Message; m != nil && m.Role == events.RoleToolResult {
				if n--; n == 0 {
					return m
				}
			}
		}
		return nil
	}
	for _, tenant := range []string{"acme", "beta"} {
		ref := events.SessionRef{Tenant: tenant, ID: "s1"}
		p.sendTo(tenant, events.Command{ID: "c1", Type: events.CmdCreate, SessionID: "s1", Tools: []string{"read"}})
		p.sendTo(tenant, events.Command{ID: "c2", Type: events.CmdPrompt, SessionID: "s1", Text: "load pdf"})
		es := p.waitLogOf(ref, "the read's reply", func(es []events.Entry) bool { return result(es, 1) != nil && lastText(es) == "loaded" })
		m := result(es, 1)
		if tenant == "beta" {
			if !m.IsError || strings.Contains(m.Content.Text(), "pdftotext") {
				t.Errorf("beta read acme's skill: %q (error %v)", m.Content.Text(), m.IsError)
			}
			continue
		}
		if m.IsError || m.Content.Text() != "\nUse pdftotext." {
			t.Errorf("the skill read from line 5: %q (error %v), want its body", m.Content.Text(), m.IsError)
		}
		p.sendTo(tenant, events.Command{ID: "c3", Type: events.CmdPrompt, SessionID: "s1", Text: "load nope"})
		es = p.waitLogOf(ref, "the second read's reply", func(es []events.Entry) bool { return result(es, 2) != nil && lastText(es) == "loaded" })
		if m := result(es, 2); !m.IsError {
			t.Errorf("a read of a skill the tenant lacks: %q, want the toolrunner's error (no such file)", m.Content.Text())
		}
	}
}

// A tenant's system prompt parts: its base for sessions that give none,
// its additions after any base; both recorded as resources of the build,
// and a change applies from the next run.
func TestTenantSystemPromptParts(t *testing.T) {
	p := newPlatform(t)
	store := p.resources()
	ctx := context.Background()
	if _, err := store.Put(ctx, "acme", resources.KindSystem, resources.SystemBase, "Acme base."); err != nil {
		t.Fatal(err)
	}
	add, err := store.Put(ctx, "acme", resources.KindSystem, resources.SystemAppend, "Never deploy on Fridays.")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Put(ctx, "acme", resources.KindSystem, "other", "x"); err == nil || !strings.Contains(err.Error(), "name must be base") {
		t.Fatalf("a part named other: %v", err)
	}
	sc, err := scripted.Parse([]byte(`{"rules": [{"reply": {"text": "ok"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	rec := &sysRecording{scriptedModels: scriptedModels{scripted.New(sc)}, prompts: map[string][]string{}}
	o, err := New(Config{Conn: p.nc, Log: p.log, Instance: "o1", Partitions: 4, LeaseTTL: testLeaseTTL,
		Models: rec, DefaultModel: "scripted/test", SystemPrompt: "Orchestrator default.", Logger: failOnRefusedMove(t)})
	if err != nil {
		t.Fatal(err)
	}
	kittest.Run(t, context.Background(), "orchestrator", o.Run)
	run := func(tenant, sid, system, text string) events.SystemPromptRecord {
		t.Helper()
		ref := events.SessionRef{Tenant: tenant, ID: sid}
		p.sendTo(tenant, events.Command{ID: "c-" + text, Type: events.CmdCreate, SessionID: sid, SystemPrompt: system, Tools: []string{}})
		p.sendTo(tenant, events.Command{ID: "p-" + text, Type: events.CmdPrompt, SessionID: sid, Text: text})
		es := p.waitLogOf(ref, "the reply to "+text, func(es []events.Entry) bool { return userFor(es, "p-"+text) != nil && lastText(es) == "ok" })
		r, ok, err := events.LastSystemPrompt(es)
		if err != nil || !ok {
			t.Fatalf("%s: no system prompt record (%v)", text, err)
		}
		if sent := rec.of(text); len(sent) != 1 || sent[0] != r.Text {
			t.Fatalf("%s: sent %q, recorded %q", text, sent, r.Text)
		}
		return r
	}
	r := run("acme", "s1", "", "plain")
	if !strings.HasPrefix(r.Text, "Acme base.\n\nNever deploy on Fridays.\nCurrent date: ") || len(r.Resources) != 2 ||
		r.Resources[0].Name != resources.SystemAppend || r.Resources[0].Version != add.Version || r.Resources[1].Name != resources.SystemBase {
		t.Errorf("a session without a prompt: %+v", r)
	}
	r = run("acme", "s2", "Own prompt.", "own")
	if !strings.HasPrefix(r.Text, "Own prompt.\n\nNever deploy on Fridays.\n") || len(r.Resources) != 1 {
		t.Errorf("a session with its own prompt: %+v", r)
	}
	r = run("beta", "s1", "", "beta")
	if !strings.HasPrefix(r.Text, "Orchestrator default.\nCurrent date: ") || len(r.Resources) != 0 {
		t.Errorf("a tenant without parts: %+v", r)
	}
}
