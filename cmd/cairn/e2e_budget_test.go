package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
)

// budgetE2EScript: every model call uses 120 tokens.
const budgetE2EScript = `{
  "defaults": {"usage": {"input": 100, "output": 20}},
  "rules": [
    {"match": {"lastRole": "user", "contains": "list files"}, "reply": {"toolCalls": [{"name": "ls", "arguments": {"path": "."}}]}},
    {"match": {"lastRole": "toolResult", "tool": "ls"}, "reply": {"text": "I see the files."}},
    {"reply": {"text": "ok"}}
  ]
}`

// TestE2EBudgetWithTheCLI: `cairn budget set|get` against `cairn up`; a
// run whose second call is over the day's tokens ends with the `budget
// exceeded` entry; the next prompt is refused (429 with ?wait=applied,
// exit 1 from `cairn prompt`); raising the limit lets it through.
func TestE2EBudgetWithTheCLI(t *testing.T) {
	u := startUpWith(t, budgetE2EScript)
	if out := u.mustCLI(t, "budget", "get", "default"); !strings.Contains(out, "tokensPerDay    no limit") {
		t.Errorf("budget get with none:\n%s", out)
	}
	for _, c := range []struct {
		args  []string
		code  int
		names string
	}{
		{[]string{"budget", "set", "default"}, 2, "--tokens-per-day"},
		{[]string{"budget", "set", "default", "--tokens-per-day", "-1"}, 2, "--tokens-per-day"},
		{[]string{"budget", "set", "default", "--cost-per-day", "NaN"}, 2, "--cost-per-day"},
		{[]string{"budget", "set", "default", "--concurrent-runs", "x"}, 2, "concurrent-runs"},
		{[]string{"budget", "set", "Bad.Tenant", "--tokens-per-day", "5"}, 1, "tenant"},
		{[]string{"budget", "set", "default", "--tokens-per-day", "2000000000000"}, 1, "tokensPerDay"},
		{[]string{"budget", "get"}, 2, "arg"},
	} {
		code, out, errOut := u.cli(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.names) {
			t.Errorf("cairn %s: exit %d, %q%q; want exit %d naming %s", strings.Join(c.args, " "), code, errOut, out, c.code, c.names)
		}
	}
	out := u.mustCLI(t, "budget", "set", "default", "--tokens-per-day", "100", "--concurrent-runs", "3")
	if !strings.Contains(out, "tokensPerDay    100") || !strings.Contains(out, "concurrentRuns  3") {
		t.Errorf("budget set:\n%s", out)
	}
	// A second set keeps the limits it does not name.
	u.mustCLI(t, "budget", "set", "default", "--cost-per-day", "5")
	var st struct {
		TokensPerDay   int64   `json:"tokensPerDay"`
		CostPerDay     float64 `json:"costPerDay"`
		ConcurrentRuns int64   `json:"concurrentRuns"`
		Today          struct {
			Tokens int64 `json:"tokens"`
			Calls  int64 `json:"calls"`
		} `json:"today"`
	}
	if err := json.Unmarshal([]byte(u.mustCLI(t, "budget", "get", "default", "--json")), &st); err != nil ||
		st.TokensPerDay != 100 || st.CostPerDay != 5 || st.ConcurrentRuns != 3 {
		t.Errorf("budget get --json: %+v %v", st, err)
	}

	u.mustCLI(t, "session", "new", "--id", "b1")
	// The first call is admitted (0 of 100 used) and uses 120; the second,
	// after the tool, is not: the run ends with the budget's error entry.
	u.cli(t, "prompt", "b1", "please list files")
	es := u.waitEntries(t, "b1", "the run ended by the budget", func(es []events.Entry) bool {
		m := lastAssistant(es)
		return m != nil && m.StopReason == events.StopError
	})
	if m := lastAssistant(es); m.ErrorMessage != "budget exceeded: tokensPerDay 100 used 120 of tenant default" {
		t.Errorf("the run's error entry: %q", m.ErrorMessage)
	}
	code, resp := u.call(t, "POST", "/v1/sessions/b1/commands?wait=applied", `{"type":"prompt","text":"hello"}`)
	e, _ := resp["error"].(map[string]any)
	if code != 429 || e["code"] != "budget_exceeded" {
		t.Errorf("prompt over budget with ?wait=applied: %d %v", code, resp)
	}
	if code, _, errOut := u.cli(t, "prompt", "b1", "hello"); code != 1 || !strings.Contains(errOut, "budget exceeded: tokensPerDay 100 used 120 of tenant default") {
		t.Errorf("cairn prompt over budget: exit %d %q", code, errOut)
	}
	if err := json.Unmarshal([]byte(u.mustCLI(t, "budget", "get", "default", "--json")), &st); err != nil || st.Today.Tokens != 120 || st.Today.Calls != 1 {
		t.Errorf("today's use: %+v %v", st, err)
	}

	u.mustCLI(t, "budget", "set", "default", "--tokens-per-day", "0")
	if out := u.mustCLI(t, "prompt", "b1", "hello"); !strings.Contains(out, "ok") {
		t.Errorf("prompt with no tokens limit:\n%s", out)
	}
}
