package store

import (
	"encoding/json"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/services/projector/internal/synth"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Tool calls and usage are attributed to the principal of the user message
// they answer, across batches (the attribution is stored with the summary).
func TestAuditAndUsageNameThePrincipal(t *testing.T) {
	msg := func(e events.Entry) synth.Msg {
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		return synth.Msg{Subject: "cairn.session.default.p1", Data: data}
	}
	ts := "2026-03-04T05:06:07.000Z"
	user := func(id, cmd, principal string) synth.Msg {
		return msg(events.Entry{V: 1, Type: events.EntryMessage, ID: id, Timestamp: ts, CommandID: cmd, Principal: principal,
			Message: &events.Message{Role: events.RoleUser, Content: events.TextContent("go"), CommandID: cmd, Timestamp: 1772600767000}})
	}
	call := func(id, callID string) synth.Msg {
		return msg(events.Entry{V: 1, Type: events.EntryMessage, ID: id, Timestamp: ts, Message: &events.Message{Role: events.RoleAssistant,
			Content:    events.Content{Blocks: []events.Block{{Type: events.BlockToolCall, ID: callID, Name: "ls", Arguments: json.RawMessage(`{}`)}}},
			StopReason: events.StopToolUse, Provider: "scripted", Model: "m", Usage: &events.Usage{Input: 10, Output: 2, TotalTokens: 12},
			Timestamp: 1772600767000}})
	}
	log := []synth.Msg{
		msg(events.Entry{V: 1, Type: events.EntrySession, ID: "p1", Timestamp: ts, Version: 3, CommandID: "c0", Principal: "key:00000000000000aa"}),
		user("u1", "c1", "key:00000000000000aa"),
		call("a1", "t1"),
		user("u2", "c2", "oidc:bob"),
		call("a2", "t2"),
		call("a3", "t3"),
	}
	for _, batch := range []int{1, 100} {
		db := openMem(t, vfs.NewMem())
		applyAll(t, db, log, batch)
		calls, _, err := db.ToolCalls(AuditFilter{Tenant: events.DefaultTenant, Session: "p1", Limit: 10})
		if err != nil || len(calls) != 3 {
			t.Fatalf("batch %d: calls %v, %v", batch, calls, err)
		}
		for i, want := range []string{"key:00000000000000aa", "oidc:bob", "oidc:bob"} {
			if calls[i].Principal != want {
				t.Errorf("batch %d: call %s principal %q, want %q", batch, calls[i].ID, calls[i].Principal, want)
			}
		}
		bob, _, err := db.ToolCalls(AuditFilter{Tenant: events.DefaultTenant, Principal: "oidc:bob", Limit: 10})
		if err != nil || len(bob) != 2 {
			t.Errorf("batch %d: bob's calls %v, %v", batch, bob, err)
		}
		rows, _, _, err := db.Usage(UsageFilter{Tenant: events.DefaultTenant})
		if err != nil || len(rows) != 1 {
			t.Fatalf("batch %d: usage %v, %v", batch, rows, err)
		}
		by := rows[0].ByPrincipal
		if by["key:00000000000000aa"] == nil || by["key:00000000000000aa"].Calls != 1 || by["oidc:bob"] == nil || by["oidc:bob"].Calls != 2 || by["oidc:bob"].Tokens.Total != 24 {
			t.Errorf("batch %d: usage by principal %+v", batch, by)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
