package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/agent"
	"github.com/cairn-agents/cairn/pkg/agent/agenttest"
	"github.com/cairn-agents/cairn/pkg/embednats"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/scripted"
	"github.com/cairn-agents/cairn/services/gateway"
	"github.com/cairn-agents/cairn/services/orchestrator"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"
)

// piSession is a pi session file (v3) with everything the context reducer
// rules on: a compaction summary, branch summaries (one empty), shell
// commands (one the user kept out of the context with !!), a call left
// without its result and closed by a turn_interrupted, a turn pi aborted,
// a model change, and an assistant message naming the model that
// answered last.
const piSession = `{"type":"session","version":3,"id":"pi-ctx","timestamp":"2026-03-01T10:00:00.000Z","cwd":"/work/proj"}
{"type":"message","id":"u1","parentId":null,"timestamp":"2026-03-01T10:00:01.000Z","message":{"role":"user","content":"start a project","timestamp":1772359201000}}
{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-03-01T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"started"}],"provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"stop","timestamp":1772359202000}}
{"type":"message","id":"u2","parentId":"a1","timestamp":"2026-03-01T10:00:03.000Z","message":{"role":"user","content":"add a parser","timestamp":1772359203000}}
{"type":"message","id":"a2","parentId":"u2","timestamp":"2026-03-01T10:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"parser added"}],"provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"stop","timestamp":1772359204000}}
{"type":"compaction","id":"c1","parentId":"a2","timestamp":"2026-03-01T10:00:05.000Z","summary":"The user started a project.","firstKeptEntryId":"u2","tokensBefore":1200}
{"type":"message","id":"b1","parentId":"c1","timestamp":"2026-03-01T10:00:06.000Z","message":{"role":"bashExecution","command":"ls","output":"parser.go","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1772359206000}}
{"type":"message","id":"b2","parentId":"b1","timestamp":"2026-03-01T10:00:07.000Z","message":{"role":"bashExecution","command":"cat .env","output":"TOKEN=s3cr3t","exitCode":0,"cancelled":false,"truncated":false,"excludeFromContext":true,"timestamp":1772359207000}}
{"type":"message","id":"u3","parentId":"b2","timestamp":"2026-03-01T10:00:08.000Z","message":{"role":"user","content":"read it and build","timestamp":1772359208000}}
{"type":"message","id":"a3","parentId":"u3","timestamp":"2026-03-01T10:00:09.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"t1","name":"read","arguments":{"path":"parser.go"}},{"type":"toolCall","id":"t2","name":"bash","arguments":{"command":"make"}}],"provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"toolUse","timestamp":1772359209000}}
{"type":"message","id":"r3","parentId":"a3","timestamp":"2026-03-01T10:00:10.000Z","message":{"role":"toolResult","toolCallId":"t1","toolName":"read","content":[{"type":"text","text":"package parser"}],"isError":false,"timestamp":1772359210000}}
{"type":"turn_interrupted","id":"ti","parentId":"r3","timestamp":"2026-03-01T10:00:11.000Z","reason":"pi was killed"}
{"type":"message","id":"u4","parentId":"ti","timestamp":"2026-03-01T10:00:12.000Z","message":{"role":"user","content":"try another way","timestamp":1772359212000}}
{"type":"message","id":"a4","parentId":"u4","timestamp":"2026-03-01T10:00:13.000Z","message":{"role":"assistant","content":[{"type":"text","text":"let me"}],"provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"aborted","timestamp":1772359213000}}
{"type":"message","id":"x1","parentId":"a4","timestamp":"2026-03-01T10:00:14.000Z","message":{"role":"user","content":"an abandoned detour","timestamp":1772359214000}}
{"type":"message","id":"x2","parentId":"x1","timestamp":"2026-03-01T10:00:15.000Z","message":{"role":"assistant","content":[{"type":"text","text":"side answer"}],"provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"stop","timestamp":1772359215000}}
{"type":"branch_summary","id":"s1","parentId":"a4","timestamp":"2026-03-01T10:00:16.000Z","fromId":"x2","summary":"Tried a side quest; it led nowhere."}
{"type":"branch_summary","id":"s2","parentId":"s1","timestamp":"2026-03-01T10:00:17.000Z","fromId":"x2","summary":""}
{"type":"model_change","id":"m1","parentId":"s2","timestamp":"2026-03-01T10:00:18.000Z","provider":"rec","modelId":"changed"}
{"type":"message","id":"u5","parentId":"m1","timestamp":"2026-03-01T10:00:19.000Z","message":{"role":"user","content":"go on","timestamp":1772359219000}}
{"type":"message","id":"a5","parentId":"u5","timestamp":"2026-03-01T10:00:20.000Z","message":{"role":"assistant","content":[{"type":"text","text":"going on"}],"provider":"rec","model":"answered","stopReason":"stop","timestamp":1772359220000}}
`

// TestImportedPiSessionIsSentWhatContextShows imports piSession into a
// platform in this process (embedded NATS, the orchestrator and the
// gateway), prompts it twice, and checks each time that the model was
// sent, byte for byte, the messages GET /context shows at the prompt,
// through agent.ToLLM — with its model and thinking level.
func TestImportedPiSessionIsSentWhatContextShows(t *testing.T) {
	rec, url := startRecordingPlatform(t)
	u := &upProcess{url: url}
	if code, out := u.call(t, "POST", "/v1/import", piSession); code != 201 || out["id"] != "pi-ctx" {
		t.Fatalf("import = %d %v", code, out)
	}
	for i, text := range []string{"and now?", "and again?"} {
		body, _ := json.Marshal(map[string]string{"id": fmt.Sprintf("p%d", i), "type": "prompt", "text": text})
		if code, out := u.call(t, "POST", "/v1/sessions/pi-ctx/commands?wait=applied", string(body)); code != 200 {
			t.Fatalf("prompt %q = %d %v", text, code, out)
		}
		all := u.waitEntries(t, "pi-ctx", "the reply to "+text, func(es []events.Entry) bool {
			es = withoutPromptRecords(es)
			n := len(es)
			return n >= 2 && es[n-2].Message != nil && es[n-2].Message.Content.Text() == text &&
				es[n-1].Message != nil && es[n-1].Message.Role == events.RoleAssistant
		})
		es := withoutPromptRecords(all)
		prompt := es[len(es)-2].ID
		// The call's system prompt is recorded after the entry it answers
		// when it is new (the first prompt), else earlier on the branch.
		leafOfCall := all[len(all)-2].ID
		req, ok := rec.Last()
		if !ok || len(rec.Requests()) != i+1 {
			t.Fatalf("the model was called %d times, want %d", len(rec.Requests()), i+1)
		}
		shown := getContext(t, url, "pi-ctx", prompt)
		got, _ := json.Marshal(req.Messages)
		want, _ := json.Marshal(agent.ToLLM(shown.Messages))
		if string(got) != string(want) {
			t.Fatalf("prompt %q: the model was sent\n%s\n/context shows\n%s", text, got, want)
		}
		if req.Model.Ref() != shown.Model || shown.Model != "rec/answered" || req.ThinkingLevel != shown.ThinkingLevel || shown.ThinkingLevel != "off" {
			t.Fatalf("prompt %q: sent %s %q, /context %s %q; want rec/answered off", text, req.Model.Ref(), req.ThinkingLevel, shown.Model, shown.ThinkingLevel)
		}
		// And the system prompt it was sent is the one the log recorded.
		if sp := getContext(t, url, "pi-ctx", leafOfCall).SystemPrompt; sp == nil || sp.Text != req.SystemPrompt || sp.Digest != events.PromptDigest(req.SystemPrompt) {
			t.Fatalf("prompt %q: the model was sent the system prompt\n%s\n/context shows %+v", text, req.SystemPrompt, sp)
		}
		if i == 0 {
			checkPiContext(t, shown.Messages, string(got))
		}
	}
}

// checkPiContext checks what the reducer made of piSession (shown, at the
// first prompt) and what the model was sent of it (sent).
func checkPiContext(t *testing.T, shown []events.Message, sent string) {
	t.Helper()
	var roles []string
	for _, m := range shown {
		roles = append(roles, m.Role)
	}
	want := "compactionSummary user assistant bashExecution bashExecution user assistant toolResult toolResult user assistant branchSummary user assistant user"
	if strings.Join(roles, " ") != want {
		t.Errorf("/context roles:\n%s\nwant\n%s", strings.Join(roles, " "), want)
	}
	for _, s := range []string{"The user started a project.", "Tried a side quest", "The tool call was interrupted before it returned a result: pi was killed", "Ran `ls`"} {
		if !strings.Contains(sent, s) {
			t.Errorf("the model was not sent %q", s)
		}
	}
	for _, s := range []string{"s3cr3t", "cat .env", "let me", "abandoned detour"} {
		if strings.Contains(sent, s) {
			t.Errorf("the model was sent %q", s)
		}
	}
}

type shownContext struct {
	Model         string                     `json:"model"`
	ThinkingLevel string                     `json:"thinkingLevel"`
	Messages      []events.Message           `json:"messages"`
	SystemPrompt  *events.SystemPromptRecord `json:"systemPrompt"`
}

func getContext(t *testing.T, url, sid, leaf string) shownContext {
	t.Helper()
	resp, err := http.Get(url + "/v1/sessions/" + sid + "/context?leaf=" + leaf)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var c shownContext
	if resp.StatusCode != 200 {
		t.Fatalf("/context = %d %s", resp.StatusCode, data)
	}
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatalf("/context body %q: %v", data, err)
	}
	return c
}

// recordingModels serves every rec/<id> model through one Recorder in
// front of a scripted model that answers "ok".
type recordingModels struct{ rec *agenttest.Recorder }

func (m recordingModels) Resolve(ref string) (llm.Provider, llm.Model, error) {
	p, id, ok := strings.Cut(ref, "/")
	if !ok || p != "rec" || id == "" {
		return nil, llm.Model{}, fmt.Errorf("model %q: only rec/<id> models here", ref)
	}
	return m.rec, llm.Model{Provider: "rec", ID: id, ContextWindow: scripted.DefaultContextWindow, MaxOutput: scripted.DefaultMaxOutput}, nil
}

func (recordingModels) Providers() []string { return []string{"rec"} }

// startRecordingPlatform runs embedded NATS, the orchestrator and the
// gateway in this process, every model call going through the returned
// Recorder; it returns the gateway's URL. Everything stops at cleanup.
func startRecordingPlatform(t *testing.T) (*agenttest.Recorder, string) {
	t.Helper()
	sc, err := scripted.Parse([]byte(`{"rules":[{"reply":{"text":"ok"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	rec := &agenttest.Recorder{Next: scripted.New(sc)}
	srv, err := embednats.Start(embednats.Config{DataDir: filepath.Join(t.TempDir(), "nats"), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	nc, err := srv.Connect(nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	log, err := provisionAll(ctx, js, 1)
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	orch, err := orchestrator.New(orchestrator.Config{Conn: nc, Log: log, Models: recordingModels{rec}, DefaultModel: "rec/default",
		Logger: quiet, Instance: "ctx-e2e", LeaseTTL: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	keyDir := t.TempDir()
	adminKey, _, err := ensureAdminKey(keyDir)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := gateway.New(gateway.Config{JetStream: js, Log: log, Logger: quiet, BootstrapAdminKey: adminKey})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var g errgroup.Group
	g.Go(func() error { return orch.Run(ctx) })
	g.Go(func() error { return gw.Serve(ctx, ln) })
	t.Cleanup(func() {
		cancel()
		if err := g.Wait(); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("platform stopped with %v", err)
		}
	})
	url := "http://" + ln.Addr().String()
	recordPlatform(t, &platform{URL: url, KeyFile: adminKeyFile(keyDir)})
	kittest.Eventually(t, 10*time.Second, "the gateway ready", gw.Ready)
	return rec, url
}
