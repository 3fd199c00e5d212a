package store

import (
	"encoding/json"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Usage is kept by tenant: each session's assistant messages count to the
// tenant its subject names (cairn.session.<tenant>.<sid>), under
// u/<tenant>/, and a tenant reads only its own rows.
func TestUsageByTenantAndDay(t *testing.T) {
	db := openMem(t, vfs.NewMem())
	defer func() {
		if err := db.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	w, err := db.NewWriter()
	if err != nil {
		t.Fatal(err)
	}
	seq := uint64(0)
	tenantOf := map[string]string{"a1": "acme", "a2": "acme", "b1": "beta", "d1": events.DefaultTenant}
	apply := func(sid string, e events.Entry) {
		t.Helper()
		seq++
		data, _ := json.Marshal(e)
		if _, err := w.Apply(seq, "cairn.session."+tenantOf[sid]+"."+sid, data); err != nil {
			t.Fatal(err)
		}
	}
	reply := func(sid, id, ts string, tokens int64) {
		apply(sid, events.Entry{V: 1, Type: events.EntryMessage, ID: id, Timestamp: ts, Message: &events.Message{
			Role: events.RoleAssistant, Provider: "scripted", Model: "m", StopReason: events.StopEnd,
			Usage: &events.Usage{Input: tokens, TotalTokens: tokens, Cost: events.Cost{Total: float64(tokens) / 1000}}}})
	}
	for sid, tenant := range tenantOf {
		apply(sid, events.Entry{V: 1, Type: events.EntrySession, ID: sid, Timestamp: "2025-03-01T10:00:00.000Z", Version: 3, Tenant: tenant})
	}
	reply("a1", "r1", "2025-03-01T10:01:00.000Z", 100)
	reply("a2", "r2", "2025-03-01T11:01:00.000Z", 50)
	reply("a1", "r3", "2025-03-02T00:00:01.000Z", 7)
	reply("b1", "r4", "2025-03-01T10:01:00.000Z", 1000)
	reply("d1", "r5", "2025-03-01T10:01:00.000Z", 3)
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rows, total, _, err := db.Usage(UsageFilter{Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Day != "2025-03-01" || rows[0].Tokens.Total != 150 || rows[0].Calls != 2 ||
		rows[1].Day != "2025-03-02" || rows[1].Tokens.Total != 7 || rows[0].Tenant != "acme" || total.Tokens.Total != 157 {
		t.Errorf("acme's usage: %+v total %+v", rows, total)
	}
	rows, _, _, err = db.Usage(UsageFilter{Tenant: "acme", Since: "2025-03-02"})
	if err != nil || len(rows) != 1 || rows[0].Tokens.Total != 7 {
		t.Errorf("acme since the 2nd: %+v, %v", rows, err)
	}
	if _, total, _, _ := db.Usage(UsageFilter{Tenant: "default"}); total.Tokens.Total != 3 {
		t.Errorf("default tenant's usage: %+v", total)
	}
	// A tenant whose name is a prefix of another's sees only its own.
	if rows, _, _, _ := db.Usage(UsageFilter{Tenant: "acm"}); len(rows) != 0 {
		t.Errorf("tenant acm sees %+v", rows)
	}
	if _, total, _, _ := db.Usage(UsageFilter{Tenant: "beta"}); total.Tokens.Total != 1000 || total.Calls != 1 {
		t.Errorf("beta's usage: %+v", total)
	}
}
