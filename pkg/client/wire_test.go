package client_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/cairn-agents/cairn/pkg/events"
)

// The SDK's response types are its own copies of the gateway's and the
// projector's JSON. Decoding the real answers strictly (no member the type
// lacks) keeps them in step: a field added to a response fails here until
// the SDK has it.
func TestResponsesDecodeStrictlyIntoTheSDKTypes(t *testing.T) {
	p := newPlatform(t)
	cl := newClient(t, p.URL)
	ctx := ctxFor(t)
	strict := func(t *testing.T, method, path, body string, v any) {
		t.Helper()
		req, _ := http.NewRequest(method, p.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+adminToken.Reveal())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			t.Fatalf("%s %s = %d %s", method, path, resp.StatusCode, data)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Fatalf("%s %s: %v\n%s", method, path, err, data)
		}
	}
	var acc client.Accepted
	strict(t, "POST", "/v1/sessions?wait=applied", `{"id":"w1"}`, &acc)
	strict(t, "POST", "/v1/sessions/w1/commands?wait=applied", `{"id":"c1","type":"prompt","text":"please list files"}`, &acc)
	strict(t, "POST", "/v1/sessions/w1/commands", `{"type":"set_thinking_level","level":"low"}`, &acc)
	var st client.CommandStatus
	eventually(t, "c1 settled", func() (bool, string) {
		st, _ = cl.CommandStatus(ctx, "w1", "c1")
		return st.State == client.StateSettled, st.State
	})
	strict(t, "GET", "/v1/sessions/w1/commands/c1", "", &st)
	eventually(t, "the ls call audited", func() (bool, string) {
		page, err := cl.ToolCalls(ctx, client.ToolCallFilter{Session: "w1"})
		return err == nil && len(page.ToolCalls) == 1 && page.ToolCalls[0].Outcome == client.OutcomeOK, errString(err)
	})
	var sum client.Summary
	strict(t, "GET", "/v1/sessions/w1", "", &sum)
	var page client.SessionPage
	strict(t, "GET", "/v1/sessions", "", &page)
	var tree client.Tree
	strict(t, "GET", "/v1/sessions/w1/tree", "", &tree)
	var c client.Context
	strict(t, "GET", "/v1/sessions/w1/context", "", &c)
	var calls client.ToolCallPage
	strict(t, "GET", "/v1/audit/tool-calls?session=w1", "", &calls)
	var usage client.UsageReport
	strict(t, "GET", "/v1/usage", "", &usage)
	var replay struct {
		Summary client.Summary  `json:"summary"`
		Tree    client.Tree     `json:"tree"`
		Entries json.RawMessage `json:"entries"`
	}
	strict(t, "GET", "/v1/sessions/w1/replay", "", &replay)
	var export bytes.Buffer
	if err := cl.Export(ctx, "w1", client.FormatPi, &export); err != nil {
		t.Fatal(err)
	}
	var imp client.Imported
	strict(t, "POST", "/v1/import?id=w2", export.String(), &imp)

	// The SDK's replay encodes as the gateway's does.
	rp, err := cl.Replay(ctx, "w1", client.ReplayPoint{})
	if err != nil {
		t.Fatal(err)
	}
	mine, _ := json.Marshal(rp)
	resp, err := authGet(p.URL + "/v1/sessions/w1/replay")
	if err != nil {
		t.Fatal(err)
	}
	theirs, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(bytes.TrimSpace(theirs), mine) {
		t.Fatalf("replay re-encoded differs:\n%s\n%s", mine, theirs)
	}
}

// openAPI reads the gateway's API document.
func openAPI(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile("../../services/gateway/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func dig(t *testing.T, v any, path ...string) any {
	t.Helper()
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("openapi.json: no %s", strings.Join(path, "."))
		}
		v = m[k]
	}
	return v
}

func keys(m any) []string {
	var ks []string
	for k := range m.(map[string]any) {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// The requests the SDK sends use the members the API document names, and
// every route it calls is in the document.
func TestRequestsMatchTheOpenAPIDocument(t *testing.T) {
	doc := openAPI(t)
	schemas := dig(t, doc, "components", "schemas")

	var create []string
	for i := range reflect.TypeFor[client.CreateSession]().NumField() {
		tag, _, _ := strings.Cut(reflect.TypeFor[client.CreateSession]().Field(i).Tag.Get("json"), ",")
		create = append(create, tag)
	}
	sort.Strings(create)
	if want := keys(dig(t, schemas, "CreateSession", "properties")); !slices.Equal(create, want) {
		t.Errorf("CreateSession members %v, the document's %v", create, want)
	}

	props := dig(t, schemas, "Command", "properties").(map[string]any)
	types := dig(t, schemas, "Command", "properties", "type", "enum").([]any)
	id := "e1"
	for _, c := range []client.Command{
		{ID: "x", Type: events.CmdPrompt, Text: "t", Images: []events.Image{{Data: "AA==", MimeType: "image/png"}}, WhenBusy: events.BusySteer},
		client.Steer("t"), client.FollowUp("t"), client.Abort(), client.Navigate(nil),
		{Type: events.CmdNavigate, EntryID: &id, Summarize: true, Instructions: "i"},
		client.Compact("i"), client.SetModel("a/b"), client.SetThinkingLevel("low"), client.SetTools(), client.Label("e1", "l"), client.Skill("pdf", "a.pdf"), client.PromptTemplate("review", "x", "y"),
	} {
		data, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		for k := range m {
			if _, ok := props[k]; !ok {
				t.Errorf("%s sends %q, which the document's Command lacks", c.Type, k)
			}
		}
		if !slices.Contains(types, any(c.Type)) {
			t.Errorf("command type %q is not in the document", c.Type)
		}
	}

	states := dig(t, doc, "paths", "/v1/sessions/{id}/commands/{commandId}", "get", "responses", "200", "content",
		"application/json", "schema", "properties", "state", "enum").([]any)
	for _, s := range []string{client.StatePending, client.StateRejected, client.StateApplied, client.StateRunning, client.StateSettled} {
		if !slices.Contains(states, any(s)) {
			t.Errorf("command state %q is not in the document", s)
		}
	}

	paths := dig(t, doc, "paths").(map[string]any)
	for _, route := range []string{"/v1/sessions", "/v1/sessions/{id}", "/v1/sessions/{id}/commands",
		"/v1/sessions/{id}/commands/{commandId}", "/v1/sessions/{id}/entries", "/v1/sessions/{id}/records",
		"/v1/sessions/{id}/context", "/v1/sessions/{id}/tree", "/v1/sessions/{id}/events", "/v1/sessions/{id}/export",
		"/v1/sessions/{id}/replay", "/v1/import", "/v1/audit/tool-calls", "/v1/usage", "/healthz"} {
		if _, ok := paths[route]; !ok {
			t.Errorf("the SDK calls %s, which the document lacks", route)
		}
	}
}
