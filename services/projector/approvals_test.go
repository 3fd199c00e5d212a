package projector

import (
	"encoding/json"
	"net/url"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/services/projector/internal/synth"
)

// approvalLog is two sessions of two tenants: s1 (default) asks for two
// calls and gets one answered, s2 (acme) asks for one.
func approvalLog(t *testing.T) []synth.Msg {
	t.Helper()
	var out []synth.Msg
	add := func(tenant, sid string, e events.Entry) {
		e.V = events.SchemaVersion
		if e.Timestamp == "" {
			e.Timestamp = "2026-12-01T10:00:0" + string(rune('0'+len(out)%10)) + ".000Z"
		}
		data, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, synth.Msg{Subject: events.Names{}.SessionSubject(events.SessionRef{Tenant: tenant, ID: sid}), Data: data})
	}
	asst := events.Message{Role: events.RoleAssistant, StopReason: events.StopToolUse, Content: events.Content{Blocks: []events.Block{
		{Type: events.BlockToolCall, ID: "t1", Name: "bash", Arguments: json.RawMessage(`{"command":"ls"}`)},
		{Type: events.BlockToolCall, ID: "t2", Name: "write", Arguments: json.RawMessage(`{"path":"a"}`)}}}}
	for _, x := range []struct{ tenant, sid string }{{events.DefaultTenant, "s1"}, {"acme", "s2"}} {
		add(x.tenant, x.sid, events.Entry{Type: events.EntrySession, ID: x.sid, Version: events.PiVersion, Tenant: x.tenant})
		add(x.tenant, x.sid, events.Entry{Type: events.EntryMessage, ID: "u1", Message: &events.Message{Role: events.RoleUser, Content: events.TextContent("go")}})
		add(x.tenant, x.sid, events.Entry{Type: events.EntryMessage, ID: "a1", ParentID: ptr("u1"), Message: &asst})
		add(x.tenant, x.sid, events.Entry{Type: events.EntryApprovalRequested, ID: "r1", ParentID: ptr("a1"), ToolCallID: "t1", ToolName: "bash", Arguments: json.RawMessage(`{"command":"ls"}`)})
	}
	add(events.DefaultTenant, "s1", events.Entry{Type: events.EntryApprovalRequested, ID: "r2", ParentID: ptr("r1"), ToolCallID: "t2", ToolName: "write", Arguments: json.RawMessage(`{"path":"a"}`)})
	add(events.DefaultTenant, "s1", events.Entry{Type: events.EntryApprovalAnswered, ID: "n1", ParentID: ptr("r2"), ToolCallID: "t1", Decision: events.DecisionDeny,
		Reason: "no", Principal: "key:k1", CommandID: "c9"})
	return out
}

func ptr(s string) *string { return &s }

func TestApprovalsReadModel(t *testing.T) {
	p := loaded(t, approvalLog(t))
	h := p.Handler()
	var page struct {
		Approvals  []Approval `json:"approvals"`
		NextCursor string     `json:"nextCursor"`
	}
	if code := getJSON(t, h, "/v1/approvals", &page); code != 200 || len(page.Approvals) != 2 {
		t.Fatalf("all of default: %d %+v", code, page)
	}
	denied := page.Approvals[0]
	if denied.ToolCallID != "t1" || denied.Status != "denied" || denied.AnsweredBy != "key:k1" || denied.Reason != "no" {
		t.Fatalf("the answered request reads %+v", denied)
	}
	if code := getJSON(t, h, "/v1/approvals?status=pending", &page); code != 200 || len(page.Approvals) != 1 || page.Approvals[0].ToolCallID != "t2" {
		t.Fatalf("pending of default: %d %+v", code, page)
	}
	if code := getJSON(t, h, "/v1/approvals?tool=bash&limit=1", &page); code != 200 || len(page.Approvals) != 1 || page.Approvals[0].Tool != "bash" {
		t.Fatalf("by tool: %d %+v", code, page)
	}
	// By request time: t1 was asked at 10:00:03, t2 at 10:00:08.
	if code := getJSON(t, h, "/v1/approvals?since=2026-12-01T10:00:05Z", &page); code != 200 || len(page.Approvals) != 1 || page.Approvals[0].ToolCallID != "t2" {
		t.Fatalf("since: %d %+v", code, page)
	}
	if code := getJSON(t, h, "/v1/approvals?until=2026-12-01T10:00:05Z", &page); code != 200 || len(page.Approvals) != 1 || page.Approvals[0].ToolCallID != "t1" {
		t.Fatalf("until: %d %+v", code, page)
	}
	if code := getJSON(t, h, "/v1/approvals?since=2026-12-01T10:00:05Z&until=2026-12-01T10:00:04Z", nil); code != 400 {
		t.Errorf("until before since answered %d, want 400", code)
	}
	if code := getJSON(t, h, "/v1/approvals?session=s2", &page); code != 200 || len(page.Approvals) != 0 {
		t.Fatalf("another tenant's session showed: %d %+v", code, page)
	}
	for _, bad := range []string{"/v1/approvals?status=maybe", "/v1/approvals?session=a/b", "/v1/approvals?limit=0", "/v1/approvals?cursor=zzz", "/v1/approvals?what=1"} {
		if code := getJSON(t, h, bad, nil); code != 400 {
			t.Errorf("%s answered %d, want 400", bad, code)
		}
	}
	var s Summary
	if code := getJSON(t, h, "/v1/sessions/s1", &s); code != 200 || s.Status != StatusWaiting {
		t.Fatalf("a session with a pending request reads %q (%d), want waiting", s.Status, code)
	}
	// Paging covers every request once.
	seen := 0
	cursor := ""
	for range 3 {
		page.NextCursor = "" // absent on the last page
		path := "/v1/approvals?limit=1"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		if code := getJSON(t, h, path, &page); code != 200 {
			t.Fatalf("%s: %d", path, code)
		}
		seen += len(page.Approvals)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if seen != 2 {
		t.Fatalf("pages held %d approvals, want 2", seen)
	}
}
