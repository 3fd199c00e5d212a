package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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
	if n := tree.Nodes[2]; !slices.Equal(n.Tools, []string{"ls"}) {
		t.Errorf("tool result node names tools %v, want [ls]", n.Tools)
	}
}
