package store

import (
	"errors"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Tenant beta's queries never return tenant acme's rows, though both have
// a session s1 with the same tool calls and usage: an attacker's notes,
// one row per query a gateway route answers from the read model.
func TestQueriesAreTenantScoped(t *testing.T) {
	db := openMem(t, vfs.NewMem())
	defer func() { _ = db.Close() }()
	w, err := db.NewWriter()
	if err != nil {
		t.Fatal(err)
	}
	seq := uint64(0)
	apply := func(tenant string, e events.Entry) {
		t.Helper()
		seq++
		e.Timestamp = "2026-11-01T10:00:0" + string(rune('0'+seq%10)) + ".000Z"
		b, err := e.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Apply(seq, "cairn.session."+tenant+".s1", b); err != nil {
			t.Fatal(err)
		}
	}
	parent := "u1"
	for _, tenant := range []string{"acme", "acme2", "beta"} {
		apply(tenant, events.Entry{Type: events.EntrySession, Version: 3, ID: "s1", Tenant: tenant, Model: "scripted/" + tenant})
		apply(tenant, events.Entry{Type: events.EntryMessage, ID: "u1", Message: &events.Message{Role: events.RoleUser, Content: events.TextContent("hi")}})
		apply(tenant, events.Entry{Type: events.EntryMessage, ID: "a1", ParentID: &parent, Message: &events.Message{Role: events.RoleAssistant,
			Content:  events.Content{Blocks: []events.Block{{Type: "toolCall", ID: "t1", Name: tenant + "-tool", Arguments: []byte(`{}`)}}},
			Provider: "scripted", Model: tenant, Usage: &events.Usage{Input: 10, TotalTokens: 10}, StopReason: events.StopToolUse}})
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()

	for _, tenant := range []string{"acme", "beta"} {
		list, _, err := db.Sessions(tenant, 10, "")
		if err != nil || len(list) != 1 || list[0].Tenant != tenant || list[0].ID != "s1" {
			t.Errorf("Sessions(%s) = %+v, %v; want its s1 only", tenant, list, err)
		}
		s, err := db.Session(events.SessionRef{Tenant: tenant, ID: "s1"})
		if err != nil || s.Tenant != tenant || s.Model != "scripted/"+tenant {
			t.Errorf("Session(%s.s1) = %+v, %v", tenant, s, err)
		}
		calls, _, err := db.ToolCalls(AuditFilter{Tenant: tenant, Limit: 10})
		if err != nil || len(calls) != 1 || calls[0].Tool != tenant+"-tool" {
			t.Errorf("ToolCalls(%s) = %+v, %v", tenant, calls, err)
		}
		for _, f := range []AuditFilter{{Tenant: tenant, Tool: "acme-tool", Limit: 10}, {Tenant: tenant, Session: "s1", Limit: 10}} {
			calls, _, err := db.ToolCalls(f)
			for _, c := range calls {
				if c.Tenant != tenant {
					t.Errorf("ToolCalls(%+v) returned %s's call %+v (%v)", f, c.Tenant, c, err)
				}
			}
		}
		rows, total, _, err := db.Usage(UsageFilter{Tenant: tenant})
		if err != nil || len(rows) != 1 || rows[0].Model != "scripted/"+tenant || total.Calls != 1 {
			t.Errorf("Usage(%s) = %+v %+v, %v", tenant, rows, total, err)
		}
	}
	// A prefix of another tenant's name is not that tenant: acme's rows
	// are not acme2's.
	if list, _, _ := db.Sessions("acm", 10, ""); len(list) != 0 {
		t.Errorf("Sessions(acm) = %+v", list)
	}
	// Reads of a session are keyed by tenant: beta's query for a session
	// only acme has answers as for a missing one.
	if _, err := db.Session(events.SessionRef{Tenant: "gamma", ID: "s1"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("gamma's s1: %v, want ErrNotFound", err)
	}
	if _, err := db.Tree(events.SessionRef{Tenant: "gamma", ID: "s1"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("gamma's tree of s1: %v, want ErrNotFound", err)
	}
	if _, err := db.EntrySeq(events.SessionRef{Tenant: "gamma", ID: "s1"}, "u1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("gamma's entry u1 of s1: %v, want ErrNotFound", err)
	}
	// A cursor of one tenant's listing does not page another's.
	_, next, err := db.Sessions("acme", 1, "")
	if err != nil {
		t.Fatal(err)
	}
	if next == "" {
		_, next, _ = db.Sessions("acme", 0, "")
	}
	if next != "" {
		var ie *InvalidError
		if _, _, err := db.Sessions("beta", 10, next); !errors.As(err, &ie) {
			t.Errorf("beta paging with acme's cursor: %v, want an invalid cursor", err)
		}
	}
}
