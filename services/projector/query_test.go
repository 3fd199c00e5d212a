package projector

import (
	"fmt"
	"github.com/cairn-agents/cairn/pkg/events"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/services/projector/internal/synth"
)

// loaded returns a projector over an in-memory database holding log.
func loaded(t testing.TB, log []synth.Msg) *Projector {
	t.Helper()
	p := testProjector(t, nil)
	w, err := p.live.current().NewWriter()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := w.Close(); err != nil {
			t.Errorf("close w: %v", err)
		}
	}()
	for i, m := range log {
		if _, err := w.Apply(uint64(i+1), m.Subject, m.Data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSessionsPagesCoverEverySessionOnce(t *testing.T) {
	p := loaded(t, synth.Log(13, 37, 2000))
	h := p.Handler()
	var all []Summary
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("too many pages")
		}
		var page struct {
			Sessions   []Summary `json:"sessions"`
			NextCursor string    `json:"nextCursor"`
		}
		path := "/v1/sessions?limit=5"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		if code := getJSON(t, h, path, &page); code != 200 {
			t.Fatalf("%s: %d", path, code)
		}
		all = append(all, page.Sessions...)
		if page.NextCursor == "" {
			break
		}
		if len(page.Sessions) != 5 {
			t.Fatalf("a page with a next cursor holds %d sessions, want 5", len(page.Sessions))
		}
		cursor = page.NextCursor
	}
	if len(all) != 37 {
		t.Fatalf("pages hold %d sessions, want 37", len(all))
	}
	seen := map[string]bool{}
	for i, s := range all {
		if seen[s.ID] {
			t.Fatalf("session %s listed twice", s.ID)
		}
		seen[s.ID] = true
		if i > 0 && parseMsT(t, s.LastActivity) > parseMsT(t, all[i-1].LastActivity) {
			t.Fatalf("not newest first: %s (%s) after %s (%s)", s.ID, s.LastActivity, all[i-1].ID, all[i-1].LastActivity)
		}
	}
}

func parseMsT(t testing.TB, ts string) string {
	t.Helper()
	if len(ts) != len("2006-01-02T15:04:05.000Z") {
		t.Fatalf("timestamp %q is not in the entry format", ts)
	}
	return ts // same layout and zone: strings order like times
}

type auditPage struct {
	ToolCalls  []ToolCall `json:"toolCalls"`
	NextCursor string     `json:"nextCursor"`
}

func auditAll(t *testing.T, h http.Handler, query string, limit int) []ToolCall {
	t.Helper()
	var out []ToolCall
	cursor := ""
	for {
		path := fmt.Sprintf("/v1/audit/tool-calls?limit=%d", limit)
		if query != "" {
			path += "&" + query
		}
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		var page auditPage
		if code := getJSON(t, h, path, &page); code != 200 {
			t.Fatalf("%s: %d", path, code)
		}
		out = append(out, page.ToolCalls...)
		if page.NextCursor == "" {
			return out
		}
		cursor = page.NextCursor
	}
}

func TestAuditIndexesAndCursors(t *testing.T) {
	p := loaded(t, synth.Log(17, 12, 3000))
	h := p.Handler()
	every := auditAll(t, h, "", 1000)
	if len(every) < 100 {
		t.Fatalf("only %d tool calls in the log; the generator should make more", len(every))
	}
	if !sort.SliceIsSorted(every, func(i, j int) bool { return every[i].StartedMs < every[j].StartedMs }) {
		t.Fatal("by-time audit is not in start order")
	}
	// Paging with small pages gives the same calls.
	if paged := auditAll(t, h, "", 7); len(paged) != len(every) {
		t.Fatalf("pages of 7 hold %d calls, one page %d", len(paged), len(every))
	}
	// Each index gives exactly the calls the filter selects from the whole.
	filters := []struct {
		query string
		keep  func(c ToolCall) bool
	}{
		{"tool=bash", func(c ToolCall) bool { return c.Tool == "bash" }},
		{"session=s0003", func(c ToolCall) bool { return c.Session == "s0003" }},
		{"session=s0003&tool=ls", func(c ToolCall) bool { return c.Session == "s0003" && c.Tool == "ls" }},
		{"outcome=error", func(c ToolCall) bool { return c.Outcome == OutcomeError }},
		{"outcome=interrupted&tool=read", func(c ToolCall) bool { return c.Outcome == OutcomeInterrupted && c.Tool == "read" }},
		{"minDuration=2s", func(c ToolCall) bool { return c.DurationMs >= 2000 }},
		{"since=" + every[len(every)/3].Started + "&until=" + every[2*len(every)/3].Started,
			func(c ToolCall) bool {
				return c.StartedMs >= every[len(every)/3].StartedMs && c.StartedMs < every[2*len(every)/3].StartedMs
			}},
	}
	for _, f := range filters {
		var want []string
		for _, c := range every {
			if f.keep(c) {
				want = append(want, c.Session+"/"+c.ID)
			}
		}
		var got []string
		for _, c := range auditAll(t, h, f.query, 3) {
			got = append(got, c.Session+"/"+c.ID)
		}
		sort.Strings(want)
		sort.Strings(got)
		if strings.Join(got, ",") != strings.Join(want, ",") || len(want) == 0 {
			t.Errorf("%s: got %d calls, want %d (non-zero)", f.query, len(got), len(want))
		}
	}
	// Outcomes seen in the synthetic log cover every kind.
	kinds := map[string]bool{}
	for _, c := range every {
		kinds[c.Outcome] = true
	}
	for _, k := range []string{OutcomeOK, OutcomeError, OutcomeInterrupted} {
		if !kinds[k] {
			t.Errorf("no %s call in the log", k)
		}
	}
}

func TestEntriesPaging(t *testing.T) {
	p := loaded(t, synth.Log(19, 3, 300))
	h := p.Handler()
	var all []struct {
		Seq uint64 `json:"seq"`
	}
	if code := getJSON(t, h, "/v1/sessions/s0001/entries", &all); code != 200 || len(all) == 0 {
		t.Fatalf("entries: %d, %d entries", code, len(all))
	}
	s, err := p.live.current().Session(events.DefaultRef("s0001"))
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(all)) != s.Entries {
		t.Fatalf("entries lists %d, the summary counts %d", len(all), s.Entries)
	}
	var next []struct {
		Seq uint64 `json:"seq"`
	}
	path := fmt.Sprintf("/v1/sessions/s0001/entries?after=%d&limit=2", all[3].Seq)
	if code := getJSON(t, h, path, &next); code != 200 || len(next) != 2 || next[0].Seq != all[4].Seq || next[1].Seq != all[5].Seq {
		t.Fatalf("%s: %d %+v, want sequences %d, %d", path, code, next, all[4].Seq, all[5].Seq)
	}
	if code := getJSON(t, h, "/v1/sessions/s0001/entries?after=s0001-3&limit=1", &next); code != 200 || len(next) != 1 {
		t.Fatalf("after an entry id: %d %+v", code, next)
	}
}

func TestBadQueries(t *testing.T) {
	p := loaded(t, synth.Log(1, 2, 50))
	h := p.Handler()
	cases := []struct {
		method, path string
		status       int
		code, field  string
	}{
		{"GET", "/v1/sessions?limit=0", 400, "invalid_parameter", "limit"},
		{"GET", "/v1/sessions?limit=1001", 400, "invalid_parameter", "limit"},
		{"GET", "/v1/sessions?limit=ten", 400, "invalid_parameter", "limit"},
		{"GET", "/v1/sessions?limit=1&limit=2", 400, "invalid_parameter", "limit"},
		{"GET", "/v1/sessions?colour=red", 400, "invalid_parameter", "colour"},
		{"GET", "/v1/sessions?cursor=%25%25", 400, "invalid_parameter", "cursor"},
		{"GET", "/v1/sessions?cursor=", 400, "invalid_parameter", "cursor"},
		{"GET", "/v1/sessions?cursor=YXQ6dHgvdG9vbC9scw", 400, "invalid_parameter", "cursor"}, // an audit cursor
		{"GET", "/v1/sessions/no%20pe", 400, "invalid_parameter", "id"},
		{"GET", "/v1/sessions/missing", 404, "not_found", "missing"},
		{"GET", "/v1/sessions/missing/tree", 404, "not_found", "missing"},
		{"GET", "/v1/sessions/s0000?x=1", 400, "invalid_parameter", "x"},
		{"GET", "/v1/sessions/s0000/entries?format=xml", 400, "invalid_parameter", "format"},
		{"GET", "/v1/sessions/s0000/entries?after=no!", 400, "invalid_parameter", "after"},
		{"GET", "/v1/sessions/s0000/entries?after=nosuchentry", 404, "not_found", "nosuchentry"},
		{"GET", "/v1/sessions/s0000/entries?limit=10001", 400, "invalid_parameter", "limit"},
		{"GET", "/v1/audit/tool-calls?outcome=maybe", 400, "invalid_parameter", "outcome"},
		{"GET", "/v1/audit/tool-calls?since=yesterday", 400, "invalid_parameter", "since"},
		{"GET", "/v1/audit/tool-calls?since=2026-11-02T00:00:00Z&until=2026-11-01T00:00:00Z", 400, "invalid_parameter", "until"},
		{"GET", "/v1/audit/tool-calls?minDuration=-1s", 400, "invalid_parameter", "minDuration"},
		{"GET", "/v1/audit/tool-calls?minDuration=5", 400, "invalid_parameter", "minDuration"},
		{"GET", "/v1/audit/tool-calls?session=a.b", 400, "invalid_parameter", "session"},
		{"GET", "/v1/audit/tool-calls?tool=", 400, "invalid_parameter", "tool"},
		{"GET", "/v1/audit/tool-calls?tool=ls&cursor=" + auditCursorFor(t, h, "tool=bash"), 400, "invalid_parameter", "cursor"},
		{"GET", "/v1/usage?since=2026-13-01", 400, "invalid_parameter", "since"},
		{"GET", "/v1/usage?since=2026-11-02&until=2026-11-01", 400, "invalid_parameter", "until"},
		{"GET", "/v1/tenants/Acme/usage", 400, "invalid_parameter", "tenant"},
		{"GET", "/v1/tenants/a.b/usage", 400, "invalid_parameter", "tenant"},
		{"GET", "/v1/tenants/acme/usage?until=tomorrow", 400, "invalid_parameter", "until"},
		{"GET", "/v1/nothing", 404, "not_found", "/v1/nothing"},
		{"POST", "/v1/sessions", 405, "method_not_allowed", "POST"},
		{"DELETE", "/v1/usage", 405, "method_not_allowed", "DELETE"},
	}
	for _, c := range cases {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		var body struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := jsonUnmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Errorf("%s %s: body is not a JSON error: %q", c.method, c.path, rec.Body.String())
			continue
		}
		if rec.Code != c.status || body.Error.Code != c.code || !strings.Contains(body.Error.Message, c.field) {
			t.Errorf("%s %s: %d %+v; want %d %s naming %q", c.method, c.path, rec.Code, body.Error, c.status, c.code, c.field)
		}
	}
}

// auditCursorFor returns a next-page cursor of an audit query.
func auditCursorFor(t *testing.T, h http.Handler, query string) string {
	t.Helper()
	var page auditPage
	getJSON(t, h, "/v1/audit/tool-calls?limit=1&"+query, &page)
	if page.NextCursor == "" {
		t.Fatalf("%s: no second page", query)
	}
	return url.QueryEscape(page.NextCursor)
}
