package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/nats-io/nats-server/v2/server"
)

// commandsStored is how many commands the commands stream holds.
func commandsStored(t *testing.T, f *fixture) uint64 {
	t.Helper()
	st, err := f.js.Stream(context.Background(), f.n.CommandsStream())
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// A command within the gateway's body limit but over what NATS stores in
// one message is 413 naming the NATS limit, not 503, and nothing is stored.
func TestCommandOverNATSPayloadIs413(t *testing.T) {
	_, _, js := natstest.RunProvisioned(t, events.Names{}, provision.Options{},
		func(o *server.Options) { o.MaxPayload = 64 << 10 })
	f := serveFixture(t, js, nil) // MaxBodyBytes: the default 16 MiB
	body := `{"type":"prompt","text":"` + strings.Repeat("x", 100<<10) + `"}`
	code, out := f.do(t, "POST", "/v1/sessions/s1/commands", body)
	if code != http.StatusRequestEntityTooLarge || errCode(out) != codeTooLarge || !strings.Contains(errMsg(out), "max_payload 65536") {
		t.Fatalf("a 100 KiB prompt on a 64 KiB NATS = %d %v; want 413 naming max_payload", code, out)
	}
	// A command that fits is stored.
	if code, out := f.do(t, "POST", "/v1/sessions/s1/commands", `{"type":"prompt","text":"`+strings.Repeat("x", 32<<10)+`"}`); code != http.StatusAccepted {
		t.Fatalf("a 32 KiB prompt = %d %v; want 202", code, out)
	}
	if n := commandsStored(t, f); n != 1 {
		t.Fatalf("the commands stream holds %d commands; want only the one that fits", n)
	}
}

// A client that sends its body slower than BodyReadTimeout is answered
// 408 and its connection closed; nothing is stored.
func TestSlowBodyIs408(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.BodyReadTimeout = 200 * time.Millisecond })
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	// Headers promise 100 bytes; the body stops after 8 and never goes on.
	req := "POST /v1/sessions/s1/commands HTTP/1.1\r\nHost: gateway\r\n" +
		"Authorization: Bearer " + f.admin.Reveal() + "\r\n" +
		"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n" + `{"type":`
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || errCode(out) != codeTimeout || !strings.Contains(errMsg(out), "not received within 200ms") {
		t.Fatalf("a stalled body = %d %v; want 408 naming the timeout", resp.StatusCode, out)
	}
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("the connection stayed open after the 408")
	}
	if n := commandsStored(t, f); n != 0 {
		t.Fatalf("the commands stream holds %d commands; want none", n)
	}
}
