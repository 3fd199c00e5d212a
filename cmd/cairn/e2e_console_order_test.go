package main

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// What the session page draws from the log, in Chromium against `cairn up`:
// notices read from the log at a run's end take their place in log order
// among the messages streamed before them (an approval's notices between
// the call and its result, not after the reply); a reload draws the same
// output again, retry notices included; and the tree offers Navigate,
// Fork and Label on conversation entries only, not on labels, approvals
// or other bookkeeping entries.

const consoleOrderScript = `{
  "defaults": {"usage": "estimate", "tokensPerSecond": 0},
  "rules": [
    {"match": {"lastRole": "user", "contains": "look around"},
     "reply": {"text": "Let me look.", "toolCalls": [{"name": "ls", "arguments": {"path": "."}}]}},
    {"match": {"lastRole": "toolResult", "tool": "ls"}, "reply": {"text": "Looked around."}},
    {"match": {"lastRole": "user", "contains": "flaky"}, "times": 1, "reply": {"error": {"status": 529, "message": "overloaded_error"}}},
    {"match": {"lastRole": "user", "contains": "flaky"}, "reply": {"text": "Answered after the retry."}},
    {"reply": {"text": "ok"}}
  ]
}`

// transcriptJS lists the output's items as "kind|text": the kind is the
// item's class, the text its content, with the attempt limit a live retry
// notice names and the log does not hold taken out.
const transcriptJS = `[...document.querySelectorAll("#transcript > li")].map(li => li.className + "|" + li.textContent)`

var attemptLimit = regexp.MustCompile(`\(attempt (\d+) of \d+\)`)

func TestE2EConsoleLogOrder(t *testing.T) {
	chromiumPath(t)
	u := startUpWith(t, consoleOrderScript)
	admin := readAdminKey(t, u)
	base := u.url
	if code, out := u.call(t, "POST", "/v1/sessions?wait=applied", `{"id":"order1","approvals":{"tools":{"ls":"ask"}}}`); code != 200 {
		t.Fatalf("create: %d %v", code, out)
	}
	b := newBrowser(t, context.Background())
	b.login(t, base, admin)
	b.run(t, "open the session", chromedp.Navigate(base+"/sessions/order1"),
		chromedp.WaitVisible(chromedp.CSS(`body[data-page="session"][data-loaded="true"][data-stream="live"]`)),
		chromedp.Evaluate[chromedp.Void](`(window.cairnSameLoad = true)`))
	count := func(sel, text string) string {
		return `[...document.querySelectorAll(` + jsString(sel) + `)].filter(e => e.textContent.includes(` + jsString(text) + `)).length`
	}
	settledAfter := func(before string) string {
		return `document.body.dataset.status === "idle" && !document.querySelector("#live .streaming") && (document.body.dataset.settled || "") !== ` + jsString(before)
	}

	// 1. A run parked at an approval, answered outside the page: the
	// approval's entries, read from the log at the run's end, go between
	// the call and the reply, as the log has them.
	before := eval[string](t, b, `document.body.dataset.settled || ""`)
	b.run(t, "a prompt that parks", chromedp.SendKeys(chromedp.ID("p-text"), "please look around"),
		chromedp.Click(chromedp.ID("p-send")), poll(`!!document.querySelector("#live .approval")`))
	call := eval[string](t, b, `document.querySelector("#live .approval").dataset.toolCall`)
	if code, out := u.call(t, "POST", "/v1/sessions/order1/commands?wait=applied", `{"type":"approve","toolCallId":`+jsString(call)+`}`); code != 200 && code != 202 {
		t.Fatalf("approve: %d %v", code, out)
	}
	b.run(t, "the run ends", poll(count("#transcript .role-assistant .text", "Looked around.")+` === 1`),
		poll(settledAfter(before)),
		poll(count("#transcript .notice.approval", "Approval asked for ls")+` === 1`),
		poll(count("#transcript .notice.approval", "Approval approve for "+call)+` === 1`))
	ids := eval[[]string](t, b, `[...document.querySelectorAll("#transcript > li[data-entry]")].map(li => li.dataset.entry)`)
	var logIDs []string
	for _, e := range u.entries(t, "order1") {
		if slices.Contains(ids, e.ID) {
			logIDs = append(logIDs, e.ID)
		}
	}
	if !slices.Equal(ids, logIDs) || len(ids) < 6 {
		t.Errorf("the output's entries are in the order %q, want the log's %q (the user's, the call, both approvals, the result, the reply)", ids, logIDs)
	}
	items := eval[[]string](t, b, transcriptJS)
	asked := slices.IndexFunc(items, func(s string) bool { return strings.Contains(s, "Approval asked for ls") })
	reply := slices.IndexFunc(items, func(s string) bool { return strings.Contains(s, "Looked around.") })
	if asked < 0 || reply < 0 || asked > reply {
		t.Errorf("the output reads %q, want the approval's notices before the reply", items)
	}

	// 2. A retried call, followed live, then the page reloaded: the same
	// output, the retry's notices drawn again from the log, once each.
	before = eval[string](t, b, `document.body.dataset.settled || ""`)
	b.run(t, "a prompt whose first call fails", chromedp.SendKeys(chromedp.ID("p-text"), "a flaky question"),
		chromedp.Click(chromedp.ID("p-send")),
		poll(count("#transcript .notice.retry", "Retry succeeded")+` === 1`),
		poll(settledAfter(before)))
	live := eval[[]string](t, b, transcriptJS)
	b.run(t, "reload", chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`body[data-page="session"][data-loaded="true"]`)),
		poll(`window.cairnSameLoad !== true`))
	reloaded := eval[[]string](t, b, transcriptJS)
	for i := range live {
		live[i] = attemptLimit.ReplaceAllString(live[i], "(attempt $1)")
	}
	if !slices.Equal(live, reloaded) {
		t.Errorf("after a reload the output reads\n%q\nwant what it read live\n%q", reloaded, live)
	}
	retrying := slices.IndexFunc(reloaded, func(s string) bool { return strings.HasPrefix(s, "notice retry|Retrying (attempt 1) in ") })
	succeeded := slices.IndexFunc(reloaded, func(s string) bool { return s == "notice retry|Retry succeeded" })
	answered := slices.IndexFunc(reloaded, func(s string) bool { return strings.Contains(s, "Answered after the retry.") })
	if retrying < 0 || !strings.HasSuffix(reloaded[retrying], ": overloaded_error") || answered < retrying || succeeded < answered ||
		eval[int](t, b, count("#transcript .notice.retry", "Retr")) != 2 {
		t.Errorf("after a reload the output reads %q, want the retry notice, the reply, the retry's success, once each", reloaded)
	}
	b.screenshot(t, "session-reloaded-retry")

	// 3. The tree: a label entry and the approval's entries are nodes too,
	// and offer no action; every conversation entry offers all three.
	user := eval[string](t, b, `document.querySelector("#transcript > li.role-user").dataset.entry`)
	if code, out := u.call(t, "POST", "/v1/sessions/order1/commands?wait=applied", `{"type":"label","entryId":`+jsString(user)+`,"label":"start"}`); code != 200 && code != 202 {
		t.Fatalf("label: %d %v", code, out)
	}
	b.run(t, "the tree with the label", chromedp.Click(chromedp.ID("t-tree")),
		poll(`(document.getElementById("t-tree").click(), [...document.querySelectorAll("#tree .node-type")].some(e => e.textContent === "label"))`))
	type node struct {
		Type    string
		Actions []string
	}
	nodes := eval[[]node](t, b, `[...document.querySelectorAll("#tree li[data-entry] > .node")].map(n => ({
		Type: n.querySelector(".node-type").textContent,
		Actions: [...n.querySelectorAll(":scope > button[data-action]")].map(b => b.dataset.action)}))`)
	seen := map[string]bool{}
	for _, n := range nodes {
		typ, _, _ := strings.Cut(n.Type, " · ")
		seen[typ] = true
		want := []string(nil)
		if typ == "message" {
			want = []string{"navigate", "fork", "label"}
		}
		if !slices.Equal(n.Actions, want) {
			t.Errorf("tree node %q offers %q, want %q", n.Type, n.Actions, want)
		}
	}
	for _, typ := range []string{"message", "label", "approval_requested", "approval_answered"} {
		if !seen[typ] {
			t.Errorf("the tree shows no %s node; it shows %+v", typ, nodes)
		}
	}
	b.screenshot(t, "session-tree-actions")
}
