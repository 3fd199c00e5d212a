package orchestrator

import (
	"context"
	"fmt"

	"github.com/cairn-agents/cairn/pkg/agent/hook"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/extension"
)

// Extensions (DESIGN §12, docs/extensions.md). The orchestrator's
// extension.Host watches the extensions bucket and keeps every remote
// handler in one shared hook registry; each session's harness gets a
// registry of its own, scoped to the session (tenant and id) and linked
// to the shared one, so a handler registered for a tenant runs only for
// that tenant's sessions, a registration change reaches running sessions
// at their next emission, and hook errors are the session's hook_error
// events. Lifecycle notices go out fire and forget.

// watchExtensions starts the host's watch and waits until the
// registrations present now are in force, so the first session served
// already calls them.
func (o *Orchestrator) watchExtensions(ctx context.Context) error {
	if o.ext == nil {
		return nil
	}
	kv, err := extension.OpenBucket(ctx, o.js, o.cfg.Names)
	if err != nil {
		return fmt.Errorf("orchestrator: %w", err)
	}
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		if err := o.ext.Run(ctx, kv); err != nil {
			o.log.Error("extensions: the registrations are no longer watched", "err", err)
		}
	}()
	select {
	case <-o.ext.Ready():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// hooks returns the registry of the session's harness.
func (a *actor) hooks() *hook.Registry {
	r := hook.New(nil)
	r.SetScope(hook.Scope{Tenant: a.sid.Tenant, SessionID: a.sid.ID})
	if a.o.ext != nil {
		r.Link(a.o.ext.Registry())
	}
	return r
}

// notify sends the session's lifecycle notice kind.
func (a *actor) notify(kind string, details any) {
	if a.o.ext != nil {
		a.o.ext.Notify(a.sid, kind, details)
	}
}

// treeNotice details session_before_tree and session_tree.
type treeNotice struct {
	TargetID  *string `json:"targetId"`
	Summarize bool    `json:"summarize,omitempty"`
}

// noticeOf sends the notice a live event stands for: a compaction's start
// and end.
func (a *actor) noticeOf(ev *events.Event) {
	switch ev.Type {
	case events.EvCompactionStart:
		a.notify(events.NoticeSessionBeforeCompact, ev.Compaction)
	case events.EvCompactionEnd:
		a.notify(events.NoticeSessionCompact, ev.Compaction)
	}
}
