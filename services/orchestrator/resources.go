package orchestrator

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/cairn-agents/cairn/pkg/agent/harness"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/resources"
	"github.com/cairn-agents/cairn/services/orchestrator/internal/intake"
)

// Resources (pkg/resources, docs/resources.md). The commands skill and
// prompt_template read the resource they name from the bucket (one read
// per command, so a put acknowledged before the command is the version it
// runs) and expand it into the user message of a prompt, which then takes
// the prompt's busy policy. The message records the resource it came from
// in its "resource" member: kind, name and version (the KV revision).
// What runs per turn reads the copy the cache's watch keeps (openResources).

// resourceRef is the "resource" member of a message a skill or template
// command produced.
type resourceRef struct {
	Kind    resources.Kind `json:"kind"`
	Name    string         `json:"name"`
	Version uint64         `json:"version"`
}

// ExtraResource is the member of a user message naming the resource it
// was expanded from.
const ExtraResource = "resource"

// openResources opens the resources bucket and starts the copy of it.
func (o *Orchestrator) openResources(ctx context.Context) error {
	s, err := resources.OpenStore(ctx, o.js, o.cfg.Names)
	if err != nil {
		return err
	}
	c, err := s.WatchCache(ctx)
	if err != nil {
		return err
	}
	o.resStore, o.resCache = s, c
	return nil
}

// runResource expands the skill or template cmd names into a prompt.
func (a *actor) runResource(ctx context.Context, c intake.Command) {
	cmd := c.Cmd
	kind := resources.KindSkill
	if cmd.Type == events.CmdPromptTemplate {
		kind = resources.KindTemplate
	}
	st, err := a.o.resStore.Get(ctx, a.sid.Tenant, kind, cmd.Name)
	if err != nil {
		code := codeUnavailable
		if errors.Is(err, resources.ErrNotFound) || errors.Is(err, resources.ErrInvalid) {
			code = codeInvalid
		}
		a.reject(ctx, cmd, code, fmt.Sprintf("name: %v", err))
		return
	}
	text, err := expand(st, cmd)
	if err != nil {
		a.reject(ctx, cmd, codeInvalid, fmt.Sprintf("name: %v", err))
		return
	}
	msg := userMessage(events.Command{ID: cmd.ID, Text: text})
	ref, _ := json.Marshal(resourceRef{Kind: kind, Name: st.Name, Version: st.Version}) // cannot fail
	msg.Extra = events.Extra{ExtraResource: ref}
	a.promptMessage(ctx, c, msg)
}

// expand is the user message of a skill or template command, as pi's
// /skill:NAME ARGS and /NAME ARGS make it.
func expand(st resources.Stored, cmd events.Command) (string, error) {
	if st.Kind == resources.KindTemplate {
		t, err := resources.ParseTemplate(st.Name, st.Text)
		if err != nil {
			return "", err
		}
		return t.Expand(cmd.Args), nil
	}
	s, err := resources.ParseSkill(st.Name, st.Text)
	if err != nil {
		return "", err
	}
	dir := skillDir(st.Name)
	return s.Expand(dir+"/SKILL.md", dir, cmd.Text), nil
}

// skillDir is where a skill's location says it is, relative to the
// session's workspace. No file is there: the orchestrator answers a read
// of its SKILL.md itself (skillFile), from the tenant's skills.
func skillDir(name string) string { return skillsDir + "/" + name }

const skillsDir = ".cairn/skills"

// skillFile returns the text of the tenant's skill whose listed location
// p is (.cairn/skills/NAME/SKILL.md, relative to the workspace, in any
// spelling path.Clean reduces to it); false for any other path, and for a
// skill the tenant does not have, whose read goes to the toolrunners.
func (a *actor) skillFile(p string) (string, bool) {
	rest, ok := strings.CutPrefix(path.Clean(p), skillsDir+"/")
	name, file, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || file != "SKILL.md" || a.o.resCache == nil {
		return "", false
	}
	st, err := a.o.resCache.Get(a.sid.Tenant, resources.KindSkill, name)
	if err != nil {
		return "", false
	}
	return st.Text, true
}

// The system prompt of every run and of every save point is built then
// (the harness calls systemPromptFor) from the session's header (its
// systemPrompt and workspace), the tenant's system prompt parts (its base
// when the header has none, its additions) and skills as the cache has
// them, and the active tools, by resources.Build (pi's buildSystemPrompt for a
// custom prompt). So a skill changed during a run is in the prompt from
// the next save point, never in the request in flight.

// systemPromptFor is the harness's SystemPromptFor for the session whose
// header is h.
func (a *actor) systemPromptFor(h events.Entry) func(tools []string) harness.SystemPrompt {
	base, cwd, tenant, cache, fallback := h.SystemPrompt, h.Cwd, a.sid.Tenant, a.o.resCache, a.o.cfg.SystemPrompt
	return func(tools []string) harness.SystemPrompt {
		var listed []resources.Listed
		var used []events.ResourceVersion
		for _, s := range cache.All(tenant, resources.KindSkill) {
			listed = append(listed, resources.Listed{Name: s.Name, Description: s.Description,
				Location: skillDir(s.Name) + "/SKILL.md", DisableModelInvocation: s.DisableModelInvocation})
			if !s.DisableModelInvocation && resources.ListsSkills(tools) { // else the prompt does not list it
				used = append(used, events.ResourceVersion{Kind: string(s.Kind), Name: s.Name, Version: s.Version})
			}
		}
		// The tenant's parts: its base for a session that gives none (else
		// the orchestrator's default), and its additions after the base.
		b, add := base, ""
		if st, err := cache.Get(tenant, resources.KindSystem, resources.SystemBase); err == nil && b == "" {
			b = st.Text
			used = append(used, events.ResourceVersion{Kind: string(st.Kind), Name: st.Name, Version: st.Version})
		}
		if b == "" {
			b = fallback
		}
		if st, err := cache.Get(tenant, resources.KindSystem, resources.SystemAppend); err == nil {
			add = st.Text
			used = append(used, events.ResourceVersion{Kind: string(st.Kind), Name: st.Name, Version: st.Version})
		}
		slices.SortFunc(used, func(x, y events.ResourceVersion) int {
			return cmp.Or(cmp.Compare(x.Kind, y.Kind), cmp.Compare(x.Name, y.Name))
		})
		text := resources.Build(resources.SystemPrompt{Base: b, Append: add, Skills: listed, Tools: tools,
			Date: time.Now().UTC().Format(time.DateOnly), Cwd: cwd})
		return harness.SystemPrompt{Text: text, Resources: used}
	}
}
