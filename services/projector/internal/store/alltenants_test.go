package store

import (
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// AllTenants lists every tenant's rows, each naming its tenant, and pages
// of one row each walk them all exactly once.
func TestAllTenantsListsEveryTenant(t *testing.T) {
	db := openMem(t, vfs.NewMem())
	defer func() { _ = db.Close() }()
	w, err := db.NewWriter()
	if err != nil {
		t.Fatal(err)
	}
	seq := uint64(0)
	apply := func(tenant, sid string, e events.Entry) {
		t.Helper()
		seq++
		e.Timestamp = "2026-11-01T10:00:0" + string(rune('0'+seq%10)) + ".000Z"
		b, err := e.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Apply(seq, "cairn.session."+tenant+"."+sid, b); err != nil {
			t.Fatal(err)
		}
	}
	parent := "u1"
	want := map[string]bool{} // tenant.sid
	for _, ref := range []events.SessionRef{{Tenant: "acme", ID: "s1"}, {Tenant: "acme", ID: "s2"}, {Tenant: "beta", ID: "s1"}} {
		want[ref.String()] = true
		apply(ref.Tenant, ref.ID, events.Entry{Type: events.EntrySession, Version: 3, ID: ref.ID, Tenant: ref.Tenant})
		apply(ref.Tenant, ref.ID, events.Entry{Type: events.EntryMessage, ID: "u1", Message: &events.Message{Role: events.RoleUser, Content: events.TextContent("hi")}})
		apply(ref.Tenant, ref.ID, events.Entry{Type: events.EntryMessage, ID: "a1", ParentID: &parent, Message: &events.Message{Role: events.RoleAssistant,
			Content:  events.Content{Blocks: []events.Block{{Type: "toolCall", ID: "t1", Name: "read", Arguments: []byte(`{}`)}}},
			Provider: "scripted", Model: "m", Usage: &events.Usage{Input: 10, TotalTokens: 10}, StopReason: events.StopToolUse}})
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()

	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		list, next, err := db.Sessions(AllTenants, 1, cursor)
		if err != nil || len(list) > 1 {
			t.Fatalf("Sessions(*) page %d = %+v, %v", page, list, err)
		}
		for _, s := range list {
			k := s.ref().String()
			if seen[k] || !want[k] {
				t.Errorf("page %d lists %s: seen before or not a session", page, k)
			}
			seen[k] = true
		}
		if next == "" {
			break
		}
		cursor = next
		if page > 5 {
			t.Fatal("the pages do not end")
		}
	}
	if len(seen) != len(want) {
		t.Errorf("Sessions(*) listed %v, want %v", seen, want)
	}

	seen = map[string]bool{}
	cursor = ""
	for page := 0; page < 6; page++ {
		calls, next, err := db.ToolCalls(AuditFilter{Tenant: AllTenants, Limit: 1, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range calls {
			seen[c.ref().String()] = true
		}
		if cursor = next; cursor == "" {
			break
		}
	}
	if len(seen) != len(want) {
		t.Errorf("ToolCalls(*) named %v, want a call of each of %v", seen, want)
	}
	if calls, _, err := db.ToolCalls(AuditFilter{Tenant: AllTenants, Session: "s1", Limit: 10}); err != nil || len(calls) != 2 || calls[0].Tenant == calls[1].Tenant {
		t.Errorf("ToolCalls(*, session s1) = %+v, %v; want acme's and beta's", calls, err)
	}
	if calls, _, err := db.ToolCalls(AuditFilter{Tenant: AllTenants, Tool: "write", Limit: 10}); err != nil || len(calls) != 0 {
		t.Errorf("ToolCalls(*, tool write) = %+v, %v; want none", calls, err)
	}
	if _, _, err := db.Sessions("acme", 1, encodeCursor("s", pActivity+"beta/0000000000000000/s1")); err == nil {
		t.Error("acme's listing took a cursor of beta's rows")
	}

	rows, total, _, err := db.Usage(UsageFilter{Tenant: AllTenants})
	tenants := map[string]bool{}
	for _, u := range rows {
		tenants[u.Tenant] = true
	}
	if err != nil || !tenants["acme"] || !tenants["beta"] || total.Tokens.Total != 30 {
		t.Errorf("Usage(*) = %+v total %+v, %v; want acme's and beta's rows, 30 tokens", rows, total, err)
	}
	if rows, _, _, err := db.Usage(UsageFilter{Tenant: AllTenants, Since: "2026-11-02"}); err != nil || len(rows) != 0 {
		t.Errorf("Usage(*, since a later day) = %+v, %v; want none", rows, err)
	}
}
