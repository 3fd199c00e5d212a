package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// End-to-end tests of the operator's paths over a real `cairn up` process:
// one /metrics for every embedded service, the online rebuild of the read
// models, and tree previews.

// pollUp calls cond every 20 ms until it holds, failing the test with
// cond's last word after 60 s.
func pollUp(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, last := cond()
		if ok {
			return
		}
		select {
		case <-deadline.C:
			t.Fatalf("%s: not within 60s; last: %s", what, last)
		case <-tick.C:
		}
	}
}

func (u *upProcess) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(u.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// promptAndSettle sends text to a new session sid and waits for the reply.
func (u *upProcess) promptAndSettle(t *testing.T, sid, text, reply string) {
	t.Helper()
	if code, out := u.call(t, "POST", "/v1/sessions?wait=applied", fmt.Sprintf(`{"id":%q}`, sid)); code != 200 {
		t.Fatalf("create %s = %d %v", sid, code, out)
	}
	if code, out := u.call(t, "POST", "/v1/sessions/"+sid+"/commands?wait=applied", fmt.Sprintf(`{"type":"prompt","text":%q}`, text)); code != 200 {
		t.Fatalf("prompt %s = %d %v", sid, code, out)
	}
	u.waitEntries(t, sid, "the reply "+reply, func(es []events.Entry) bool {
		m := lastAssistant(es)
		return m != nil && m.Content.Text() == reply
	})
}

// opsScript is e2eScript with token counts on every reply.
var opsScript = strings.Replace(e2eScript, `"rules"`, `"defaults": {"usage": {"input": 100, "output": 20}}, "rules"`, 1)

var typeLine = regexp.MustCompile(`(?m)^# TYPE (\S+) `)

// TestE2EOneMetricsForEveryService: path 3 of issue 16. After a prompt with a
// tool call, the /metrics of `cairn up`'s HTTP address holds the series of
// every embedded service, each family once.
func TestE2EOneMetricsForEveryService(t *testing.T) {
	u := startUpWith(t, opsScript)
	u.promptAndSettle(t, "m1", "please list files", "I see the files.")
	want := map[string][]string{ // family → label pairs one of its series must carry
		"cairn_agent_turns_total":               {"stop_reason=toolUse"},
		"cairn_llm_tokens_total":                {"direction=output"},
		"cairn_llm_requests_total":              {"provider=scripted"},
		"cairn_tool_calls_total":                {"tool=ls", "outcome=ok"},
		"cairn_orchestrator_commands_total":     {"type=prompt"},
		"cairn_toolrunner_results_total":        {"tool=ls", "outcome=ok"},
		"cairn_toolrunner_call_seconds":         {"tool=ls"},
		"cairn_tool_queue_pending":              {"pool=default"},
		"cairn_projector_lag_entries":           nil,
		"cairn_projector_applied_sequence":      nil,
		"cairn_projector_entries_applied_total": nil,
		"cairn_gateway_requests_total":          {"route=command"},
		"cairn_gateway_commands_total":          {"type=prompt"},
		"cairn_compactor_running":               nil,
		"go_goroutines":                         nil,
		"process_resident_memory_bytes":         nil,
	}
	var text string
	pollUp(t, "every service's series on /metrics", func() (bool, string) {
		code, body := u.get(t, "/metrics")
		if code != 200 {
			return false, fmt.Sprintf("status %d: %s", code, body)
		}
		text = body
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
		if err != nil {
			t.Fatalf("/metrics does not parse: %v", err)
		}
		for name, pairs := range want {
			f, ok := fams[name]
			if !ok {
				return false, "no family " + name
			}
			if !hasSeries(f, pairs) {
				return false, fmt.Sprintf("%s has no series with %v", name, pairs)
			}
		}
		return true, ""
	})
	var names []string
	for _, m := range typeLine.FindAllStringSubmatch(text, -1) {
		names = append(names, m[1])
	}
	slices.Sort(names)
	for i := 1; i < len(names); i++ {
		if names[i] == names[i-1] {
			t.Errorf("family %s is exported twice", names[i])
		}
	}
	if len(names) < len(want) {
		t.Fatalf("only %d families: %v", len(names), names)
	}
}

// hasSeries reports whether f has a series carrying every label=value pair.
func hasSeries(f *dto.MetricFamily, pairs []string) bool {
	for _, m := range f.Metric {
		ok := true
		for _, p := range pairs {
			k, v, _ := strings.Cut(p, "=")
			ok = ok && slices.ContainsFunc(m.Label, func(l *dto.LabelPair) bool { return l.GetName() == k && l.GetValue() == v })
		}
		if ok {
			return true
		}
	}
	return false
}

// TestE2ETreeNodesCarryPreviews: path 6 of issue 16. One GET of the tree
// gives what a client needs to draw it: each node's first line of text, its
// tool names, its label.
func TestE2ETreeNodesCarryPreviews(t *testing.T) {
	u := startUp(t)
	u.promptAndSettle(t, "t1", "please list files\nand say what you see", "I see the files.")
	es := u.entries(t, "t1")
	var userID string
	for _, e := range es {
		if e.Message != nil && e.Message.Role == events.RoleUser {
			userID = e.ID
		}
	}
	if code, out := u.call(t, "POST", "/v1/sessions/t1/commands?wait=applied",
		fmt.Sprintf(`{"type":"label","entryId":%q,"label":"the ask"}`, userID)); code != 200 {
		t.Fatalf("label = %d %v", code, out)
	}
	type node struct {
		ID, Type, Role, Label, Preview string
		Tools                          []string
	}
	var tree struct {
		Nodes []node
	}
	var got []string
	pollUp(t, "the label in the tree", func() (bool, string) {
		code, body := u.get(t, "/v1/sessions/t1/tree")
		if code != 200 {
			return false, body
		}
		if err := json.Unmarshal([]byte(body), &tree); err != nil {
			t.Fatalf("tree: %v: %s", err, body)
		}
		got = got[:0]
		for _, n := range tree.Nodes {
			got = append(got, fmt.Sprintf("%s/%s %q %v [%s]", n.Type, n.Role, n.Preview, n.Tools, n.Label))
		}
		return len(tree.Nodes) > 0 && tree.Nodes[len(tree.Nodes)-1].Type == events.EntryLabel, strings.Join(got, " | ")
	})
	want := []string{
		`message/user "please list files…" [] [the ask]`,
		`custom/ "cairn.system_prompt" [] []`, // what the model call after it was sent
		`message/assistant "" [ls] []`,
		`message/toolResult`, // the listing of an empty workspace: its preview is the tool's to say
		`message/assistant "I see the files." [] []`,
		`label/ "the ask" [] []`,
	}
	if len(got) != len(want) {
		t.Fatalf("tree nodes:\n%s\nwant %d", strings.Join(got, "\n"), len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("node %d = %s, want %s", i, got[i], want[i])
		}
	}
	if n := tree.Nodes[3]; !slices.Equal(n.Tools, []string{"ls"}) {
		t.Errorf("tool result node names tools %v, want [ls]", n.Tools)
	}
	// cairn tree draws it from that one answer, through the gateway.
	out, err := exec.Command(cairnBinary(t), "--server", u.url, "tree", "t1").CombinedOutput()
	if err != nil {
		t.Fatalf("cairn tree: %v\n%s", err, out)
	}
	for _, w := range []string{`user "please list files…" [the ask]`, "assistant call:ls", "toolResult ls", `assistant "I see the files."`, `label "the ask"`} {
		if !strings.Contains(string(out), w) {
			t.Errorf("cairn tree printed\n%s\nwithout %q", out, w)
		}
	}
}

// bigSession returns a pi v3 file of one session with n messages.
func bigSession(t *testing.T, sid string, n int) string {
	t.Helper()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var b strings.Builder
	add := func(e events.Entry) {
		line, err := e.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	add(events.Entry{Type: events.EntrySession, Version: 3, ID: sid, Timestamp: events.FormatTime(t0), Cwd: "/w"})
	var parent *string
	for i := range n {
		id := fmt.Sprintf("m%05d", i)
		m := &events.Message{Role: events.RoleUser, Content: events.TextContent(fmt.Sprintf("question %d", i))}
		if i%2 == 1 {
			m = &events.Message{Role: events.RoleAssistant, Content: events.TextContent(fmt.Sprintf("answer %d", i)),
				StopReason: events.StopEnd, Provider: "scripted", Model: "e2e", Usage: &events.Usage{Input: 10, Output: 5, TotalTokens: 15}}
		}
		add(events.Entry{Type: events.EntryMessage, ID: id, ParentID: parent, Timestamp: events.FormatTime(t0.Add(time.Duration(i) * time.Millisecond)), Message: m})
		parent = &id
	}
	return b.String()
}

// TestE2EOnlineRebuild: path 5 of issue 16. `cairn projector rebuild`
// against a running `cairn up` rebuilds the read models online, through the
// gateway, printing its progress, while queries keep being answered; the
// digest after it (`cairn projector dump`, through the gateway too) equals
// the digest before (DESIGN §6).
func TestE2EOnlineRebuild(t *testing.T) {
	u := startUpWith(t, opsScript)
	bin := cairnBinary(t)
	u.promptAndSettle(t, "o1", "please list files", "I see the files.")
	const imported = 4000 // enough entries that the rebuild takes a while
	resp, err := http.Post(u.url+"/v1/import", "application/jsonl", strings.NewReader(bigSession(t, "o2", imported)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("import = %d", resp.StatusCode)
	}
	lag := regexp.MustCompile(`(?m)^cairn_projector_lag_entries 0$`)
	pollUp(t, "the projector to apply the whole log", func() (bool, string) {
		_, m := u.get(t, "/metrics")
		code, s := u.get(t, "/v1/sessions/o2")
		return code == 200 && strings.Contains(s, fmt.Sprintf(`"entries":%d`, imported+1)) && lag.MatchString(m), s
	})
	dump := func() string {
		t.Helper()
		out, err := exec.Command(bin, "--server", u.url, "projector", "dump").Output()
		if err != nil {
			t.Fatalf("projector dump: %v", err)
		}
		return string(out)
	}
	before := dump()
	if !strings.HasPrefix(before, "applied ") || !strings.Contains(before, "\nsha256 ") {
		t.Fatalf("dump printed %q", before)
	}

	// A reader asks while the rebuild runs: each answer is checked, and
	// counted as during the rebuild when the rebuild's status says running
	// both before and after it.
	paths := []string{"/v1/sessions/o1", "/v1/sessions/o1/tree", "/v1/sessions/o2", "/v1/usage"}
	want := map[string]string{}
	for _, p := range paths {
		code, body := u.get(t, p)
		if code != 200 {
			t.Fatalf("%s = %d %s", p, code, body)
		}
		want[p] = body
	}
	running := func() bool {
		_, s := u.get(t, "/v1/admin/projector/rebuild")
		return strings.Contains(s, `"state":"rebuilding"`) || strings.Contains(s, `"state":"switching"`)
	}
	stop, readerDone := make(chan struct{}), make(chan error, 1)
	var during, answers int
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				readerDone <- nil
				return
			default:
			}
			p := paths[i%len(paths)]
			was := running()
			resp, err := http.Get(u.url + p)
			if err != nil {
				readerDone <- err
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(body) != want[p] {
				readerDone <- fmt.Errorf("%s answered %d during the rebuild:\n%s\nwas\n%s", p, resp.StatusCode, body, want[p])
				return
			}
			answers++
			if was && running() {
				during++
			}
		}
	}()
	cmd := exec.Command(bin, "--server", u.url, "projector", "rebuild")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	close(stop)
	if err := <-readerDone; err != nil {
		t.Fatal(err)
	}
	if runErr != nil {
		t.Fatalf("projector rebuild: %v\n%s", runErr, stderr.String())
	}
	for _, w := range []string{"online rebuild started", "rebuilt online through sequence", "entries/s"} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("rebuild's progress lacks %q:\n%s", w, stderr.String())
		}
	}
	if stdout.String() != before {
		t.Errorf("rebuild printed the digest\n%s\nbefore it was\n%s", stdout.String(), before)
	}
	if after := dump(); after != before {
		t.Fatalf("digest after the online rebuild\n%s\nbefore\n%s", after, before)
	}
	if during == 0 {
		t.Fatalf("no query was answered while the rebuild ran (%d answers in all)", answers)
	}
	t.Logf("%d answers, %d of them while the rebuild ran; progress:\n%s", answers, during, stderr.String())
	// The platform goes on: a new prompt is projected into the rebuilt models.
	u.promptAndSettle(t, "o3", "please list files", "I see the files.")
	pollUp(t, "o3 in the rebuilt read models", func() (bool, string) {
		code, s := u.get(t, "/v1/sessions/o3")
		return code == 200 && strings.Contains(s, `"status":"idle"`) && strings.Contains(s, `"messages":4`), s
	})
}
