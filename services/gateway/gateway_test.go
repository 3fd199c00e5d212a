package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provider/secret"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/nats-io/nats.go/jetstream"
)

type fixture struct {
	js    jetstream.JetStream
	url   string
	g     *Gateway
	n     events.Names
	stop  func()
	admin secret.Secret // the bootstrap admin key
	hc    *http.Client  // sends the admin key with every request
}

// bearer is a RoundTripper that sends token with every request.
type bearer struct{ token secret.Secret }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token.Reveal())
	return http.DefaultTransport.RoundTrip(r)
}

// authed returns a client that sends token with every request.
func authed(token secret.Secret) *http.Client { return &http.Client{Transport: bearer{token}} }

// newFixture runs a gateway over an embedded server with the streams it uses.
func newFixture(t testing.TB, mutate func(*Config)) *fixture {
	t.Helper()
	n := events.Names{}
	_, _, js := natstest.RunProvisioned(t, n, provision.Options{})
	return serveFixture(t, js, mutate)
}

// newLogFixture is newFixture with the session log configured: the
// routes that read the log directly (records, command status, export).
func newLogFixture(t testing.TB) (*fixture, *session.JetStreamLog) {
	t.Helper()
	var log *session.JetStreamLog
	f := newFixture(t, func(c *Config) {
		l, err := session.NewJetStreamLog(context.Background(), c.JetStream)
		if err != nil {
			t.Fatal(err)
		}
		log, c.Log = l, l
	})
	return f, log
}

// serveFixture runs a gateway on js (whose streams exist), with a fresh
// bootstrap admin key unless mutate sets one.
func serveFixture(t testing.TB, js jetstream.JetStream, mutate func(*Config)) *fixture {
	t.Helper()
	n := events.Names{}
	admin, _, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{JetStream: js, WaitTimeout: 20 * time.Second, BootstrapAdminKey: admin}
	if mutate != nil {
		mutate(&cfg)
	}
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Serve(rctx, ln) }()
	stop := sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("gateway stopped with %v", err)
		}
	})
	t.Cleanup(stop)
	f := &fixture{js: js, url: "http://" + ln.Addr().String(), g: g, n: n, stop: stop, admin: cfg.BootstrapAdminKey, hc: authed(cfg.BootstrapAdminKey)}
	waitFor(t, func() bool {
		resp, err := f.hc.Get(f.url + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	return f
}

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	kittest.Eventually(t, 10*time.Second, "condition", cond)
}

func (f *fixture) do(t *testing.T, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, f.url+path, strings.NewReader(body))
	resp, err := f.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	data, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("%s %s: body %q is not a JSON object", method, path, data)
	}
	return resp.StatusCode, out
}

func errMsg(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}

func TestCreateStoresCommandOnce(t *testing.T) {
	f := newFixture(t, nil)
	code, out := f.do(t, "POST", "/v1/sessions", `{"id":"s1","model":"scripted/demo","tools":["ls"]}`)
	if code != 201 || out["id"] != "s1" {
		t.Fatalf("create = %d %v", code, out)
	}
	code, out = f.do(t, "POST", "/v1/sessions", `{"id":"s1","model":"scripted/demo","tools":["ls"]}`)
	if code != 201 || out["duplicate"] != true {
		t.Fatalf("retried create = %d %v, want a duplicate", code, out)
	}
	st, err := f.js.Stream(context.Background(), f.n.CommandsStream())
	if err != nil {
		t.Fatal(err)
	}
	// The stream stores it under its partition: cairn.cmd.<p>.<tenant>.s1.
	m, err := st.GetLastMsgForSubject(context.Background(), "cairn.cmd.*.default.s1")
	if err != nil {
		t.Fatal(err)
	}
	if m.Sequence != 1 {
		t.Fatalf("stream holds %d commands, want 1", m.Sequence)
	}
	cmd, err := events.DecodeCommand(m.Data)
	if err != nil {
		t.Fatal(err)
	}
	if cmd.Type != events.CmdCreate || cmd.SessionID != "s1" || cmd.Model != "scripted/demo" || m.Header.Get(events.HeaderMsgID) != events.CommandMsgID(events.DefaultTenant, cmd.ID) {
		t.Fatalf("stored command %+v, header %v", cmd, m.Header)
	}
}

func TestBadInputNamesTheProblem(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.MaxBodyBytes = 1024 })
	cases := []struct {
		method, path, body string
		code               int
		msg                string
	}{
		{"POST", "/v1/sessions", `{"id":"bad id"}`, 400, `id: session id "bad id" has ' '`},
		{"POST", "/v1/sessions", `{"model":"nomodel"}`, 400, `model: must be provider/model`},
		{"POST", "/v1/sessions", `{"colour":"blue"}`, 400, `unknown field "colour"`},
		{"POST", "/v1/sessions/s1/commands", `[1]`, 400, `body must be a JSON object`},
		{"POST", "/v1/sessions/s1/commands", `{"type":"dance"}`, 400, `type: unknown command type "dance"`},
		{"POST", "/v1/sessions/s1/commands", `{"type":"prompt"}`, 400, `text: is required`},
		{"POST", "/v1/sessions/s1/commands", `{"type":"prompt","text":"hi","whenBusy":"later"}`, 400, `whenBusy: unknown policy "later"`},
		{"POST", "/v1/sessions/s1/commands", `{"type":"navigate"}`, 400, `entryId: is required`},
		{"POST", "/v1/sessions/s1/commands", `{"type":"skill"}`, 400, `name: is required`},
		{"POST", "/v1/sessions/s1/commands", `{"type":"skill","name":"../x"}`, 400, `name: "../x" may only hold`},
		{"POST", "/v1/sessions/s1/commands", `{"type":"skill","name":"pdf","args":["a"]}`, 400, `args: only applies to prompt_template`},
		{"POST", "/v1/sessions/s1/commands", `{"type":"prompt_template","name":"review","args":"a b"}`, 400, `args: must be an array of strings`},
		{"POST", "/v1/sessions/s1/commands", `{"type":"prompt_template","name":"review","text":"a"}`, 400, `text: does not apply to prompt_template`},
		{"POST", "/v1/sessions/s1/commands", `{"type":"prompt_template","name":"review","whenBusy":"later"}`, 400, `whenBusy: unknown policy "later"`},
		{"POST", "/v1/sessions/s1/commands", `{"type":"abort","sessionId":"s2"}`, 400, `does not match the session in the path`},
		{"POST", "/v1/sessions/s1/commands?wait=soon", `{"type":"abort"}`, 400, `wait: unknown value "soon"`},
		{"POST", "/v1/sessions/s1/commands", `{"type":"prompt","text":"` + strings.Repeat("x", 2000) + `"}`, 413, `over the limit of 1024 bytes`},
		{"POST", "/v1/sessions/a.b/commands", `{"type":"abort"}`, 400, `session id in path: id: session id "a.b" has '.'`},
		{"GET", "/v1/sessions/s1/events?after=x", ``, 400, `after: must be an event id`},
		{"GET", "/v1/nothing", ``, 404, `no route for GET /v1/nothing`},
		{"GET", "/v1/usage", ``, 503, `no projector is configured`},
	}
	for _, c := range cases {
		code, out := f.do(t, c.method, c.path, c.body)
		if code != c.code || !strings.Contains(errMsg(out), c.msg) {
			t.Errorf("%s %s %s = %d %q; want %d containing %q", c.method, c.path, c.body, code, errMsg(out), c.code, c.msg)
		}
	}
}

// fakeOrchestrator applies each command of the stream by appending an entry
// naming it, or a rejection for prompts saying "reject me".
func fakeOrchestrator(t *testing.T, f *fixture) {
	ctx, cancel := context.WithCancel(context.Background())
	cons, err := f.js.OrderedConsumer(ctx, f.n.CommandsStream(), jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		cmd, err := events.DecodeCommand(m.Data())
		if err != nil {
			t.Errorf("orchestrator got an invalid command: %v", err)
			return
		}
		e := events.Entry{V: 1, Type: events.EntryMessage, ID: events.DeriveID("cmd", cmd.ID), CommandID: cmd.ID,
			Timestamp: events.FormatTime(time.Now()),
			Message:   &events.Message{Role: events.RoleUser, Content: events.TextContent(cmd.Text)}}
		if strings.Contains(cmd.Text, "reject me") {
			e = events.Entry{V: 1, Type: events.EntryCommandRejected, ID: events.DeriveID("cmd", cmd.ID), CommandID: cmd.ID,
				Timestamp: events.FormatTime(time.Now()), Reason: "session is busy", Code: "busy"}
		}
		data, _ := json.Marshal(e)
		ref, ok := events.SessionOf(m.Subject()) // the stored subject carries the tenant
		if !ok {
			t.Errorf("command on %s names no session", m.Subject())
			return
		}
		if _, err := f.js.Publish(ctx, f.n.SessionSubject(ref), data); err != nil && ctx.Err() == nil {
			t.Errorf("append: %v", err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cc.Stop() })
}

func TestWaitApplied(t *testing.T) {
	f := newFixture(t, nil)
	fakeOrchestrator(t, f)
	code, out := f.do(t, "POST", "/v1/sessions/s1/commands?wait=applied", `{"id":"c1","type":"prompt","text":"hello"}`)
	if code != 200 || out["commandId"] != "c1" || out["entryId"] != events.DeriveID("cmd", "c1") {
		t.Fatalf("wait=applied = %d %v", code, out)
	}
	code, out = f.do(t, "POST", "/v1/sessions/s1/commands?wait=applied", `{"id":"c2","type":"prompt","text":"reject me"}`)
	if code != 409 || errMsg(out) != "session is busy" || out["reason"] != "busy" {
		t.Fatalf("rejected command = %d %v", code, out)
	}
}

func TestWaitAppliedTimesOut(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.WaitTimeout = time.Millisecond })
	code, out := f.do(t, "POST", "/v1/sessions/s1/commands?wait=applied", `{"id":"c1","type":"abort"}`)
	if code != 504 || !strings.Contains(errMsg(out), "it will still be applied") {
		t.Fatalf("= %d %v", code, out)
	}
}

type sseEvent struct {
	id   string
	data string
}

// readSSE reads n events from an SSE response.
func readSSE(t *testing.T, body io.Reader, n int) []sseEvent {
	t.Helper()
	var out []sseEvent
	sc := bufio.NewScanner(body)
	var cur sseEvent
	for len(out) < n && sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			cur.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		case line == "" && cur.data != "":
			out = append(out, cur)
			cur = sseEvent{}
		}
	}
	if len(out) < n {
		t.Fatalf("read %d events, want %d (err %v)", len(out), n, sc.Err())
	}
	return out
}

func publishEvent(t *testing.T, f *fixture, sid string, i int) {
	t.Helper()
	data, _ := events.Event{Type: events.EvTurnStart, SessionID: sid, Seq: uint64(i)}.Encode()
	if _, err := f.js.Publish(context.Background(), f.n.EventSubject(events.DefaultRef(sid)), data); err != nil {
		t.Fatal(err)
	}
}

// created stores a create of session sid in tenant ("" the default):
// the event stream of a session answers 404 before that.
func (f *fixture) created(t *testing.T, tenant, sid string) {
	t.Helper()
	if code, body := f.doAs(t, tenant, "POST", "/v1/sessions", `{"id":"`+sid+`"}`); code != http.StatusCreated {
		t.Fatalf("create %s = %d %s", sid, code, body)
	}
}

func TestEventsStreamAndResume(t *testing.T) {
	f := newFixture(t, nil)
	f.created(t, "", "s1")
	publishEvent(t, f, "other", 0) // another session's event must not show up
	for i := 1; i <= 3; i++ {
		publishEvent(t, f, "s1", i)
	}
	// From the start: the three stored events, then live ones.
	resp, err := f.hc.Get(f.url + "/v1/sessions/s1/events?from=start")
	if err != nil {
		t.Fatal(err)
	}
	got := readSSE(t, resp.Body, 3)
	if got[0].id != "2" || got[2].id != "4" {
		t.Fatalf("ids = %v, want 2..4", got)
	}
	publishEvent(t, f, "s1", 4)
	live := readSSE(t, resp.Body, 1)
	resp.Body.Close()
	if live[0].id != "5" {
		t.Fatalf("live event id = %s, want 5", live[0].id)
	}
	ev, err := events.DecodeEvent([]byte(live[0].data))
	if err != nil || ev.Seq != 4 || ev.SessionID != "s1" {
		t.Fatalf("live event %v, %v", ev, err)
	}
	// Resume after id 3: events 4 and 5 again, nothing before.
	req, _ := http.NewRequest("GET", f.url+"/v1/sessions/s1/events", nil)
	req.Header.Set("Last-Event-ID", "3")
	resp, err = f.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got = readSSE(t, resp.Body, 2)
	if got[0].id != "4" || got[1].id != "5" {
		t.Fatalf("resumed ids = %v, want 4, 5", got)
	}
}

func TestOpenAPIMatchesRoutes(t *testing.T) {
	f := newFixture(t, nil)
	resp, err := f.hc.Get(f.url + "/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	served := map[string]bool{}
	for _, p := range f.g.patterns {
		served[p] = true
		if !documented[p] {
			t.Errorf("%s is served but not in openapi.json", p)
		}
	}
	for p := range documented {
		if !served[p] {
			t.Errorf("%s is in openapi.json but not served", p)
		}
	}
}

func TestMetricsExposed(t *testing.T) {
	f := newFixture(t, nil)
	f.do(t, "GET", "/healthz", "")
	resp, err := f.hc.Get(f.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{`cairn_gateway_requests_total{code="200",route="healthz"}`, "cairn_gateway_sse_streams"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
