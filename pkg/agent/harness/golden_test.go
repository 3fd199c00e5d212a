package harness_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/cairn-agents/cairn/pkg/agent"
	"github.com/cairn-agents/cairn/pkg/agent/agenttest"
	"github.com/cairn-agents/cairn/pkg/sessiontree"
	"github.com/cairn-agents/cairn/pkg/sessiontree/sessiontreetest"
)

// TestGoldenContextsAreWhatTheModelIsSent runs every golden context case
// through a harness: prompted at each want's position, the provider is
// sent the reducer's context of the prompt's entry, through agent.ToLLM,
// byte for byte, with its model, thinking level and tools. (The gateway's
// test runs the same cases against /context.)
func TestGoldenContextsAreWhatTheModelIsSent(t *testing.T) {
	cases, err := sessiontreetest.Cases()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		for _, w := range c.Wants {
			t.Run(c.Name+"/"+w.Section, func(t *testing.T) {
				run, err := agenttest.RunGolden(t, c, w.At, "and now?")
				if w.Err() {
					if err == nil {
						t.Fatalf("the case wants %s but the harness was prompted", w.Body)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				x, err := sessiontree.NewIndex(run.Entries)
				if err != nil {
					t.Fatal(err)
				}
				path, err := x.Path(run.Prompt)
				if err != nil {
					t.Fatal(err)
				}
				want, err := sessiontree.BuildContext(x.Header(), path)
				if err != nil {
					t.Fatal(err)
				}
				sent, _ := json.Marshal(run.Request.Messages)
				built, _ := json.Marshal(agent.ToLLM(want.Messages))
				if string(sent) != string(built) {
					t.Fatalf("the provider was sent\n%s\nthe context is\n%s", sent, built)
				}
				if want.Model != "" && run.Request.Model.Ref() != want.Model || run.Request.ThinkingLevel != want.ThinkingLevel {
					t.Errorf("sent model %s thinking %q, the context has %q %q", run.Request.Model.Ref(), run.Request.ThinkingLevel, want.Model, want.ThinkingLevel)
				}
				if want.Tools != nil {
					var names []string
					for _, s := range run.Request.Tools {
						names = append(names, s.Name)
					}
					if !slices.Equal(sorted(names), sorted(want.Tools)) {
						t.Errorf("sent tools %v, the context has %v", names, want.Tools)
					}
				}
			})
		}
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
