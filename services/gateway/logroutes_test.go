package gateway

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
)

func TestContextExportImport(t *testing.T) {
	var log session.Log
	f := newFixture(t, func(c *Config) {
		l, err := session.NewJetStreamLog(context.Background(), c.JetStream)
		if err != nil {
			t.Fatal(err)
		}
		log = l
		c.Log = l
	})
	ctx := context.Background()
	s, err := session.Create(ctx, log, events.Entry{ID: "x1", Model: "scripted/demo", Cwd: "x1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []events.Message{
		{Role: events.RoleUser, Content: events.TextContent("hello"), Timestamp: 1},
		{Role: events.RoleAssistant, Content: events.TextContent("hi there"), StopReason: events.StopEnd, Timestamp: 2},
	} {
		m := m
		if _, err := s.Append(ctx, events.Entry{Type: events.EntryMessage, Message: &m}); err != nil {
			t.Fatal(err)
		}
	}

	code, out := f.do(t, "GET", "/v1/sessions/x1/context", "")
	msgs, _ := out["messages"].([]any)
	if code != 200 || len(msgs) != 2 {
		t.Fatalf("context = %d %v", code, out)
	}
	if code, out := f.do(t, "GET", "/v1/sessions/nope/context", ""); code != 404 || !strings.Contains(errMsg(out), `no session "nope"`) {
		t.Fatalf("unknown session context = %d %v", code, out)
	}
	if code, out := f.do(t, "GET", "/v1/sessions/x1/context?leaf=zzz", ""); code != 404 || !strings.Contains(errMsg(out), `leaf: no entry "zzz"`) {
		t.Fatalf("unknown leaf = %d %v", code, out)
	}

	resp, err := f.hc.Get(f.url + "/v1/sessions/x1/export?format=pi")
	if err != nil {
		t.Fatal(err)
	}
	exported, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.Count(string(exported), "\n") != 3 || strings.Contains(string(exported), "parentDigest") {
		t.Fatalf("export = %d %q", resp.StatusCode, exported)
	}

	code, out = f.do(t, "POST", "/v1/import?id=x2", string(exported))
	if code != 201 || out["id"] != "x2" {
		t.Fatalf("import = %d %v", code, out)
	}
	resp, _ = f.hc.Get(f.url + "/v1/sessions/x2/export?format=pi")
	again, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Replace(string(again), `"id":"x2"`, `"id":"x1"`, 1) != string(exported) {
		t.Fatalf("export of the import differs:\n%s\n%s", exported, again)
	}
	if code, out := f.do(t, "POST", "/v1/import?id=x2", string(exported)); code != 409 || !strings.Contains(errMsg(out), "already exists") {
		t.Fatalf("second import = %d %v", code, out)
	}
	if code, out := f.do(t, "POST", "/v1/import", "not json\n"); code != 400 || !strings.Contains(errMsg(out), "pi file: line 1") {
		t.Fatalf("bad import = %d %v", code, out)
	}
}

// A gateway that may not write session logs (a standalone gateway's NATS
// user) refuses an import at once, naming why and the way that works, and
// writes nothing.
func TestImportRefusedWhereTheGatewayCannotWrite(t *testing.T) {
	const why = "import is not available through a standalone gateway"
	f := newFixture(t, func(c *Config) {
		l, err := session.NewJetStreamLog(context.Background(), c.JetStream)
		if err != nil {
			t.Fatal(err)
		}
		c.Log = l
		c.ImportRefused = why
	})
	pi := `{"type":"session","version":3,"id":"imp1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"imp1"}` + "\n"
	code, out := f.do(t, "POST", "/v1/import", pi)
	e, _ := out["error"].(map[string]any)
	if code != http.StatusNotImplemented || e["code"] != "not_implemented" || e["message"] != why {
		t.Fatalf("import = %d %v, want 501 not_implemented naming why", code, out)
	}
	if code, _ := f.do(t, "GET", "/v1/sessions/imp1/records", ""); code != 404 {
		t.Fatalf("the refused import wrote a session: records = %d", code)
	}
}
