package telemetrytest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/telemetry"
)

// TestTraceStartsAtTheGateway sends the create and prompt commands over
// HTTP to a gateway process, with a W3C traceparent as a traced client
// would, and checks that one trace runs from the client's request through
// the gateway's server span, the orchestrator's prompt (a child of that
// span, across the NATS hop of the command) and its tool call, to the
// toolrunner's execution in a third process.
func TestTraceStartsAtTheGateway(t *testing.T) {
	traceID, clientSpan := randomHex(t, 16), randomHex(t, 8)
	post := func(t *testing.T, url, body string) {
		t.Helper()
		req, err := http.NewRequest("POST", url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("traceparent", fmt.Sprintf("00-%s-%s-01", traceID, clientSpan))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("POST %s: %d %s", url, resp.StatusCode, data)
		}
	}
	out := runVia(t, false, false, func(t *testing.T, gw string) {
		post(t, gw+"/v1/sessions?wait=applied", `{"id":"s1","commandId":"c1","tools":["ls"]}`)
		post(t, gw+"/v1/sessions/s1/commands", fmt.Sprintf(`{"id":"c2","type":"prompt","text":%q}`, prompt))
	})

	find := func(name, service string) []span {
		var got []span
		for _, s := range out.spans {
			if s.Name == name && (service == "" || s.Service == service) {
				got = append(got, s)
			}
		}
		return got
	}
	reqs := find("POST /v1/sessions/{id}/commands", "gateway")
	if len(reqs) != 1 {
		t.Fatalf("%d gateway spans of POST .../commands, want 1; spans:\n%s", len(reqs), dump(out.spans))
	}
	gw := reqs[0]
	if gw.Trace != traceID || gw.Parent != clientSpan {
		t.Fatalf("gateway span %+v: want trace %s under the client's span %s", gw, traceID, clientSpan)
	}
	if gw.Attrs["http.route"] != "/v1/sessions/{id}/commands" || gw.Attrs["http.request.method"] != "POST" ||
		gw.Attrs["http.response.status_code"] != "202" || gw.Attrs[telemetry.AttrSession] != "s1" {
		t.Errorf("gateway span attributes %v", gw.Attrs)
	}
	if creates := find("POST /v1/sessions", "gateway"); len(creates) != 1 || creates[0].Trace != traceID {
		t.Errorf("gateway spans of POST /v1/sessions: %+v, want one in trace %s", creates, traceID)
	}

	prompts := find(telemetry.SpanPrompt, "orchestrator")
	if len(prompts) != 1 {
		t.Fatalf("%d prompt spans, want 1; spans:\n%s", len(prompts), dump(out.spans))
	}
	if p := prompts[0]; p.Trace != traceID || p.Parent != gw.ID {
		t.Fatalf("prompt span %+v: want a child of the gateway's span %s in trace %s\n%s", p, gw.ID, traceID, dump(out.spans))
	}
	calls, execs := find(telemetry.SpanTool, "orchestrator"), find(telemetry.SpanToolRun, "toolrunner")
	if len(calls) != 1 || len(execs) != 1 {
		t.Fatalf("%d tool calls, %d executions, want 1 and 1:\n%s", len(calls), len(execs), dump(out.spans))
	}
	if calls[0].Trace != traceID || execs[0].Trace != traceID || execs[0].Parent != calls[0].ID {
		t.Fatalf("tool call %+v and execution %+v: want both in trace %s, the execution under the call", calls[0], execs[0], traceID)
	}
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
