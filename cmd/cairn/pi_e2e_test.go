package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/embednats"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/sessiontree"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// These tests check, through the HTTP API of a whole platform run in this
// process, the places where Cairn follows the pi harness (issue 24): tool
// sets, navigation, silent overflow, overflow recovery and retries.

// piScript drives every session of these tests; each rule is reached by a
// prompt no other test sends. The window is small so that a few long
// prompts make a history a compaction can summarize.
const piScript = `{"defaults":{"contextWindow":4000,"usage":{"input":100,"output":10}},"rules":[
 {"match":{"contains":"<conversation>"},"reply":{"text":"## Goal\nsummarised"}},
 {"match":{"lastRole":"user","contains":"silent overflow"},"times":1,"reply":{"text":"took it all","usage":{"input":5000,"output":10}}},
 {"match":{"lastRole":"user","contains":"overflow once"},"times":1,"reply":{"error":{"status":400,"message":"prompt is too long: 5000 tokens > 4000 maximum"}}},
 {"match":{"lastRole":"user","contains":"overflow always"},"reply":{"error":{"status":400,"message":"prompt is too long: 5000 tokens > 4000 maximum"}}},
 {"match":{"lastRole":"user","contains":"network flake"},"times":1,"reply":{"error":{"status":400,"message":"network_error: Network connection lost."}}},
 {"match":{"lastRole":"user","contains":"retry flake"},"times":1,"reply":{"error":{"status":400,"message":"The server had an error while processing your request. Please retry your request."}}},
 {"match":{"lastRole":"user","contains":"throttle flake"},"times":1,"reply":{"error":{"status":400,"message":"Throttling error: Too many tokens, please wait before trying again."}}},
 {"match":{"lastRole":"user","contains":"quota gone"},"times":1,"reply":{"error":{"status":429,"message":"insufficient_quota: You exceeded your current quota, please check your plan and billing details."}}},
 {"reply":{"text":"ok"}}]}`

// piPlatform is the platform in this process, on a data directory that
// outlives a restart.
type piPlatform struct {
	t    *testing.T
	dir  string
	p    *platform
	stop context.CancelFunc
	*upProcess
}

func startPiPlatform(t *testing.T) *piPlatform {
	t.Helper()
	pp := &piPlatform{t: t, dir: t.TempDir()}
	if err := os.WriteFile(filepath.Join(pp.dir, "script.json"), []byte(piScript), 0o644); err != nil {
		t.Fatal(err)
	}
	pp.start()
	t.Cleanup(func() { pp.shutdown() })
	return pp
}

func (pp *piPlatform) start() {
	pp.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p, err := startPlatform(ctx, platformConfig{DataDir: filepath.Join(pp.dir, "data"), HTTPAddr: "127.0.0.1:0",
		NATSListen: "127.0.0.1:0", Script: filepath.Join(pp.dir, "script.json"), Model: "scripted/pi", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		cancel()
		pp.t.Fatal(err)
	}
	recordPlatform(pp.t, p)
	pp.p, pp.stop, pp.upProcess = p, cancel, &upProcess{url: p.URL}
}

func (pp *piPlatform) shutdown() {
	if pp.p == nil {
		return
	}
	pp.stop()
	if err := pp.p.wait(); err != nil {
		pp.t.Errorf("platform stopped with %v", err)
	}
	pp.p = nil
}

// post sends a command with ?wait=applied.
func (pp *piPlatform) post(t *testing.T, sid, body string) (int, map[string]any) {
	t.Helper()
	return pp.call(t, "POST", "/v1/sessions/"+sid+"/commands?wait=applied", body)
}

func (pp *piPlatform) create(t *testing.T, sid string) {
	t.Helper()
	if code, out := pp.call(t, "POST", "/v1/sessions?wait=applied", `{"id":"`+sid+`"}`); code != 200 {
		t.Fatalf("create %s = %d %v", sid, code, out)
	}
}

// prompt sends text and waits for the run it starts to settle (the
// session's runs-th agent_end); it returns the session's events so far.
func (pp *piPlatform) prompt(t *testing.T, sid, text string, runs int) []events.Event {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"type": "prompt", "text": text})
	if code, out := pp.post(t, sid, string(body)); code != 200 {
		t.Fatalf("prompt %q = %d %v", text, code, out)
	}
	return pp.events(t, sid, func(evs []events.Event) bool { return len(ofType(evs, events.EvAgentEnd)) >= runs })
}

// history gives sid three long exchanges, enough for a compaction to
// summarize the first.
func (pp *piPlatform) history(t *testing.T, sid string) {
	t.Helper()
	for i := 1; i <= 3; i++ {
		pp.prompt(t, sid, "question "+strings.Repeat("z", 2000), i)
	}
}

// events reads the session's stored and live events until done holds.
func (u *upProcess) events(t *testing.T, sid string, done func([]events.Event) bool) []events.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", u.url+"/v1/sessions/"+sid+"/events?from=start", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var evs []events.Event
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		ev, err := events.DecodeEvent([]byte(data))
		if err != nil {
			t.Fatalf("event %s: %v", data, err)
		}
		if evs = append(evs, ev); done(evs) {
			return evs
		}
	}
	t.Fatalf("events of %s: the condition did not hold within 60s (%v); saw %s", sid, sc.Err(), describeEvents(evs))
	return nil
}

func ofType(evs []events.Event, typ string) []events.Event {
	var out []events.Event
	for _, ev := range evs {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

func describeEvents(evs []events.Event) string {
	var parts []string
	for _, ev := range evs {
		if ev.Type != events.EvMessageUpdate {
			parts = append(parts, ev.Type)
		}
	}
	return strings.Join(parts, " ")
}

// compactions describes compaction events for a failure message.
func compactions(evs []events.Event) string {
	var parts []string
	for _, ev := range evs {
		if c := ev.Compaction; c != nil {
			parts = append(parts, fmt.Sprintf("%s{reason=%s willRetry=%v entry=%q error=%q}", ev.Type, c.Reason, c.WillRetry, c.EntryID, c.Error))
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func errorText(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	msg, _ := e["message"].(string)
	return msg
}

// leafOf is the active leaf the log gives.
func leafOf(t *testing.T, es []events.Entry) string {
	t.Helper()
	idx, err := sessiontree.NewIndex(es)
	if err != nil {
		t.Fatal(err)
	}
	if l := idx.Leaf(); l != nil {
		return *l
	}
	return "(root)"
}

func TestPiParityOverTheAPI(t *testing.T) {
	pp := startPiPlatform(t)

	// Point 1: a tool set names each tool once, at the gateway and, for a
	// command that reaches the orchestrator another way, there.
	t.Run("duplicate tool names", func(t *testing.T) {
		code, out := pp.call(t, "POST", "/v1/sessions?wait=applied", `{"id":"dup","tools":["ls","read","ls"]}`)
		if code != 400 || !strings.Contains(errorText(out), `tools[2]: duplicate tool name "ls" (tools[0] already names it)`) {
			t.Fatalf("create with a repeated tool = %d %v", code, out)
		}
		if code, _ := pp.call(t, "GET", "/v1/sessions/dup/commands/"+events.DeriveID("create", "dup"), ""); code != 404 {
			t.Fatalf("the refused create was stored: status %d", code)
		}
		pp.create(t, "tools1")
		code, out = pp.post(t, "tools1", `{"type":"set_tools","tools":["read","read"]}`)
		if code != 400 || !strings.Contains(errorText(out), `tools[1]: duplicate tool name "read"`) {
			t.Fatalf("set_tools with a repeated tool = %d %v", code, out)
		}
		// Straight into the command stream, past the gateway.
		admin, err := nats.NkeyOptionFromSeed(pp.p.Creds)
		if err != nil {
			t.Fatal(err)
		}
		nc, err := nats.Connect(pp.p.NATS, admin)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		js, _ := jetstream.New(nc)
		cmd := events.Command{V: events.SchemaVersion, ID: "st-dup", SessionID: "tools1", Type: events.CmdSetTools, Tools: []string{"ls", "bash", "ls"}}
		data, _ := json.Marshal(cmd)
		msg := nats.NewMsg(events.Names{}.CommandSubject(events.DefaultRef("tools1")))
		msg.Data = data
		msg.Header.Set(events.HeaderMsgID, cmd.ID)
		if _, err := js.PublishMsg(context.Background(), msg); err != nil {
			t.Fatal(err)
		}
		es := pp.waitEntries(t, "tools1", "the refusal of st-dup", hasCommand("st-dup"))
		last := es[len(es)-1]
		if last.Type != events.EntryCommandRejected || !strings.Contains(last.Reason, `tools[2]: duplicate tool name "ls"`) {
			t.Fatalf("set_tools past the gateway recorded as %+v", last)
		}
		if code, out := pp.call(t, "GET", "/v1/sessions/tools1/commands/st-dup", ""); code != 200 || out["state"] != "rejected" {
			t.Fatalf("status of st-dup = %d %v", code, out)
		}
	})

	// Point 3: a successful reply whose prompt was over the window is
	// compacted (reason overflow), not asked for again.
	t.Run("silent overflow", func(t *testing.T) {
		t.Parallel()
		pp.create(t, "silent")
		pp.history(t, "silent")
		evs := pp.prompt(t, "silent", "silent overflow", 4)
		ends := ofType(evs, events.EvCompactionEnd)
		if len(ends) != 1 || ends[0].Compaction.Reason != "overflow" || ends[0].Compaction.WillRetry || ends[0].Compaction.Error != "" {
			t.Fatalf("compaction events %s", compactions(evs))
		}
		if starts := ofType(evs, events.EvCompactionStart); len(starts) != 1 || starts[0].Compaction.Reason != "overflow" {
			t.Fatalf("compaction events %s", compactions(evs))
		}
		es := pp.entries(t, "silent")
		if got := describeEntries(es[len(es)-3:]); got != "user:silent overflow | assistant:took it all | compaction" {
			t.Fatalf("the log ends: %s", got)
		}
	})

	// Point 4 and issue 16: overflow recovery says what it did and why
	// the run ended.
	t.Run("overflow recovery", func(t *testing.T) {
		t.Parallel()
		pp.create(t, "ovf1")
		pp.history(t, "ovf1")
		evs := pp.prompt(t, "ovf1", "overflow once", 4)
		ends := ofType(evs, events.EvCompactionEnd)
		if len(ends) != 1 || ends[0].Compaction.Reason != "overflow" || !ends[0].Compaction.WillRetry || ends[0].Compaction.EntryID == "" {
			t.Fatalf("compaction events %s", compactions(evs))
		}
		if m := lastAssistant(pp.entries(t, "ovf1")); m.Content.Text() != "ok" {
			t.Fatalf("the retry after the compaction answered %+v", m)
		}

		pp.create(t, "ovf2")
		pp.history(t, "ovf2")
		evs = pp.prompt(t, "ovf2", "overflow always", 4)
		const failed = "context overflow recovery failed after one compact-and-retry attempt"
		checkOverflowEnding(t, pp, "ovf2", evs, failed, 2)

		pp.create(t, "ovf3")
		evs = pp.prompt(t, "ovf3", "overflow always, with nothing before", 1)
		checkOverflowEnding(t, pp, "ovf3", evs, "context overflow recovery failed: nothing to compact", 1)
	})

	// Point 5: retries decided by the error text too.
	for _, tc := range []struct {
		sid, text string
		retried   bool
	}{
		{"net", "network flake", true},
		{"please", "retry flake", true},
		{"throttle", "throttle flake", true},
		{"quota", "quota gone", false},
	} {
		t.Run("retry "+tc.text, func(t *testing.T) {
			t.Parallel()
			pp.create(t, tc.sid)
			evs := pp.prompt(t, tc.sid, tc.text, 1)
			retries := ofType(evs, events.EvRetryStart)
			if starts := ofType(evs, events.EvCompactionStart); len(starts) != 0 {
				t.Fatalf("%q was taken for an overflow: %s", tc.text, compactions(evs))
			}
			m := lastAssistant(pp.entries(t, tc.sid))
			if tc.retried && (len(retries) != 1 || m.Content.Text() != "ok") {
				t.Fatalf("%q: %d retries, last reply %+v; want one retry, then ok", tc.text, len(retries), m)
			}
			if !tc.retried && (len(retries) != 0 || m.StopReason != events.StopError || !strings.HasPrefix(m.ErrorMessage, "quota (status 429)")) {
				t.Fatalf("%q: %d retries, last reply %+v; want no retry", tc.text, len(retries), m)
			}
		})
	}
}

// checkOverflowEnding checks that the run ended with an assistant message
// of its own whose error starts with want, and that the last of the
// session's n compaction_end events carries that error.
func checkOverflowEnding(t *testing.T, pp *piPlatform, sid string, evs []events.Event, want string, n int) {
	t.Helper()
	es := pp.entries(t, sid)
	last := es[len(es)-1]
	if last.Message == nil || last.Message.StopReason != events.StopError || !strings.HasPrefix(last.Message.ErrorMessage, want) {
		t.Fatalf("%s: the log ends with %+v; want an error starting with %q", sid, last.Message, want)
	}
	ends := ofType(evs, events.EvCompactionEnd)
	if len(ends) != n || ends[len(ends)-1].Compaction.Error != last.Message.ErrorMessage || ends[len(ends)-1].Compaction.WillRetry {
		t.Fatalf("%s: compaction events %s; want %d compaction_end, the last carrying %q", sid, compactions(evs), n, last.Message.ErrorMessage)
	}
	cid := ""
	for _, e := range es {
		if e.Message != nil && e.Message.Role == events.RoleUser {
			cid = e.CommandID
		}
	}
	code, out := pp.call(t, "GET", "/v1/sessions/"+sid+"/commands/"+cid, "")
	msg, _ := out["message"].(map[string]any)
	if code != 200 || out["state"] != "settled" || !strings.HasPrefix(msg["errorMessage"].(string), want) {
		t.Fatalf("%s: status of the prompt = %d %v", sid, code, out)
	}
}

// Point 2: navigation as in pi, its editor text, and a navigation to the
// active leaf, which writes nothing and is still reported applied — after
// a restart too, and not applied again when every command is read again
// (as after a crash that lost the intake's checkpoint).
func TestPiNavigationOverTheAPI(t *testing.T) {
	pp := startPiPlatform(t)
	pp.create(t, "nav")
	pp.prompt(t, "nav", "first question", 1)
	pp.prompt(t, "nav", "second question", 2)
	es := withoutPromptRecords(pp.entries(t, "nav")) // session, user, assistant, user, assistant
	user1, reply1, user2, reply2 := es[1].ID, es[2].ID, es[3].ID, es[4].ID

	// To a user message: the leaf is its parent, and its text comes back.
	code, out := pp.post(t, "nav", `{"id":"n-user","type":"navigate","entryId":"`+user2+`"}`)
	if code != 200 || out["editorText"] != "second question" || out["entryId"] == nil {
		t.Fatalf("navigate to a user message = %d %v", code, out)
	}
	es = pp.entries(t, "nav")
	if leaf := es[len(es)-1]; leaf.Type != events.EntryLeaf || *leaf.TargetID != reply1 || leaf.LeafSelected() != user2 || leafOf(t, es) != reply1 {
		t.Fatalf("navigation recorded as %+v (selected %q), leaf %s", leaf, leaf.LeafSelected(), leafOf(t, es))
	}
	// To the active leaf: nothing written, applied all the same.
	before := len(es)
	code, out = pp.post(t, "nav", `{"id":"n-same","type":"navigate","entryId":"`+reply1+`"}`)
	if code != 200 || out["noEffect"] != true || out["entryId"] != nil {
		t.Fatalf("navigate to the leaf = %d %v", code, out)
	}
	if n := len(pp.entries(t, "nav")); n != before {
		t.Fatalf("navigating to the leaf wrote %d entries", n-before)
	}
	// The CLI: to an assistant message (no text back), then to the first
	// user message (its text back; the leaf is before the first entry).
	if code, stdout, stderr := runCairn(t, "--server", pp.url, "navigate", "nav", reply2); code != 0 || strings.Count(stdout, "\n") != 1 {
		t.Fatalf("cairn navigate to a reply: %d %q %q", code, stdout, stderr)
	}
	code, stdout, stderr := runCairn(t, "--server", pp.url, "navigate", "nav", user1)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != 0 || len(lines) != 2 || lines[1] != "first question" {
		t.Fatalf("cairn navigate to the first message: %d %q %q", code, stdout, stderr)
	}
	checkStatuses := func(when string) {
		t.Helper()
		if code, out := pp.call(t, "GET", "/v1/sessions/nav/commands/n-user", ""); code != 200 || out["state"] != "applied" || out["editorText"] != "second question" {
			t.Fatalf("%s: status of n-user = %d %v", when, code, out)
		}
		if code, out := pp.call(t, "GET", "/v1/sessions/nav/commands/n-same", ""); code != 200 || out["state"] != "applied" || out["noEffect"] != true {
			t.Fatalf("%s: status of n-same = %d %v", when, code, out)
		}
		if code, out := pp.call(t, "GET", "/v1/sessions/nav/commands/"+lines[0], ""); code != 200 || out["editorText"] != "first question" {
			t.Fatalf("%s: status of the CLI's navigation = %d %v", when, code, out)
		}
	}
	checkStatuses("before the restart")
	es = pp.entries(t, "nav")
	if leafOf(t, es) != "(root)" {
		t.Fatalf("leaf after the CLI's navigations: %s", leafOf(t, es))
	}

	// Restart, with every command to be read again.
	pp.shutdown()
	rewindCheckpoints(t, filepath.Join(pp.dir, "data", "nats"))
	pp.start()
	checkStatuses("after the restart")
	// A prompt shows where the leaf is: had n-same been applied again, the
	// leaf would be reply1 and the prompt its child.
	pp.prompt(t, "nav", "third question", 3)
	// (A branch from the root has no system prompt record yet: the run
	// records one after its prompt.)
	es = withoutPromptRecords(es)
	after := withoutPromptRecords(pp.entries(t, "nav"))
	if len(after) != len(es)+2 || after[len(es)].ParentID != nil {
		t.Fatalf("after the restart the log went from %d to %d entries; the prompt's parent %v (want a new root)\n%s",
			len(es), len(after), after[len(es)].ParentID, describeEntries(after))
	}
}

// rewindCheckpoints sets every partition's command checkpoint of the
// stopped platform's NATS store back to the start.
func rewindCheckpoints(t *testing.T, natsDir string) {
	t.Helper()
	srv, err := embednats.Start(embednats.Config{DataDir: natsDir, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	nc, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	kv, err := js.KeyValue(ctx, events.Names{}.CheckpointsBucket())
	if err != nil {
		t.Fatal(err)
	}
	keys, err := kv.ListKeysFiltered(ctx, "cmd.*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for k := range keys.Keys() {
		if _, err := kv.Put(ctx, k, []byte("1")); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no command checkpoint to rewind")
	}
}
