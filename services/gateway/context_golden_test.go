package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/cairn-agents/cairn/pkg/agent"
	"github.com/cairn-agents/cairn/pkg/agent/agenttest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/cairn-agents/cairn/pkg/sessiontree/sessiontreetest"
)

// TestContextIsWhatTheModelIsSent runs every golden context case through
// a harness, prompted at each want's position, stores the session it wrote
// in the log and asks /context for the context at the prompt: its
// messages, through agent.ToLLM (the one conversion to provider
// messages), are the bytes of messages the provider was sent, and its
// model and thinking level are the request's. A case that wants an error
// is refused on both sides: the log or /context refuses it, and no harness
// is prompted on it.
func TestContextIsWhatTheModelIsSent(t *testing.T) {
	f, log := newLogFixture(t)
	cases, err := sessiontreetest.Cases()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range cases {
		for _, w := range c.Wants {
			t.Run(c.Name+"/"+w.Section, func(t *testing.T) {
				n++
				sid := fmt.Sprintf("golden-%d", n)
				run, err := agenttest.RunGolden(t, c, w.At, "and now?")
				if w.Err() {
					if err == nil {
						t.Fatalf("the case wants %s but the harness was prompted", w.Body)
					}
					if store(t, log, sid, c.Entries) == nil {
						if code, _ := f.getContext(t, sid, w.At); code == http.StatusOK {
							t.Fatalf("/context answered 200 where the case wants %s", w.Body)
						}
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := store(t, log, sid, run.Entries); err != nil {
					t.Fatal(err)
				}
				code, got := f.getContext(t, sid, run.Prompt)
				if code != http.StatusOK {
					t.Fatalf("/context = %d", code)
				}
				shown, _ := json.Marshal(agent.ToLLM(got.Messages))
				sent, _ := json.Marshal(run.Request.Messages)
				if string(shown) != string(sent) {
					t.Fatalf("the provider was sent\n%s\n/context shows\n%s", sent, shown)
				}
				if got.Model != "" && got.Model != run.Request.Model.Ref() || got.ThinkingLevel != run.Request.ThinkingLevel {
					t.Errorf("/context: model %q thinking %q; sent %s %q", got.Model, got.ThinkingLevel, run.Request.Model.Ref(), run.Request.ThinkingLevel)
				}
			})
		}
	}
}

// store writes entries (header first, if any) to the log as session sid,
// each with the parent it has.
func store(t *testing.T, log session.Log, sid string, entries []events.Entry) error {
	t.Helper()
	ctx := context.Background()
	h := events.Entry{Type: events.EntrySession}
	if len(entries) > 0 && entries[0].Type == events.EntrySession {
		h, entries = entries[0], entries[1:]
	}
	h.ID = sid
	s, err := session.Create(ctx, log, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, err := s.AppendExact(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

type contextBody struct {
	Model         string           `json:"model"`
	ThinkingLevel string           `json:"thinkingLevel"`
	Messages      []events.Message `json:"messages"`
}

// getContext asks /context for session sid at leaf ("" = the active leaf).
func (f *fixture) getContext(t *testing.T, sid, leaf string) (int, contextBody) {
	t.Helper()
	u := f.url + "/v1/sessions/" + sid + "/context"
	if leaf != "" {
		u += "?leaf=" + url.QueryEscape(leaf)
	}
	resp, err := f.hc.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out contextBody
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatalf("/context body %q: %v", data, err)
		}
	}
	return resp.StatusCode, out
}
