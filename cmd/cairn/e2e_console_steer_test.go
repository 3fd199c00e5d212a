package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// What TestE2EConsole leaves out, in Chromium against `cairn up`: the
// sessions page's search, filter and live status; the session page's tabs
// by keyboard and a name on every control; the busy policy, steer,
// follow-up and abort from the prompt box, on a run held at an approval so
// that the run is busy for as long as the test needs (no race with a
// stream); tool calls with outcomes and durations; a label, a navigation
// with a summary that makes a branch, and a fork.

const consoleSteerScript = `{
  "defaults": {"usage": "estimate", "tokensPerSecond": 0},
  "rules": [
    {"match": {"lastRole": "user", "contains": "look around"},
     "reply": {"text": "Let me look.", "toolCalls": [{"name": "ls", "arguments": {"path": "."}}]}},
    {"match": {"lastRole": "toolResult", "tool": "ls"}, "reply": {"text": "Looked around."}},
    {"match": {"lastRole": "user", "contains": "steer now"}, "reply": {"text": "Steered."}},
    {"match": {"lastRole": "user", "contains": "later please"}, "reply": {"text": "Followed up."}},
    {"reply": {"text": "ok"}}
  ]
}`

// unnamedControls lists the page's controls a screen reader could not name.
const unnamedControls = `[...document.querySelectorAll("input, select, textarea, button")].filter(e => {
	if (e.type === "hidden") return false;
	if (e.getAttribute("aria-label")) return false;
	if (e.tagName === "BUTTON") return !e.textContent.trim();
	return !(e.labels && e.labels.length);
}).map(e => e.outerHTML.slice(0, 80))`

func TestE2EConsoleSteer(t *testing.T) {
	chromiumPath(t)
	u := startUpWith(t, consoleSteerScript)
	admin := readAdminKey(t, u)
	base := u.url
	for _, body := range []string{`{"id":"steer1","approvals":{"tools":{"ls":"ask"}}}`, `{"id":"plain1","model":"scripted/other"}`} {
		if code, out := u.call(t, "POST", "/v1/sessions?wait=applied", body); code != 200 {
			t.Fatalf("create %s: %d %v", body, code, out)
		}
	}
	b := newBrowser(t, context.Background())
	b.login(t, base, admin)

	// Sessions: search and the status filter narrow the rows; a run that
	// parks elsewhere shows as waiting without a reload.
	row := func(id string) string { return `document.querySelector('#sessions tr[data-session="` + id + `"]')` }
	b.run(t, "both sessions", poll(`!!`+row("steer1")+` && !!`+row("plain1")))
	b.run(t, "search", chromedp.SendKeys(chromedp.ID("f-search"), "plain"),
		poll(`!!`+row("plain1")+` && !`+row("steer1")))
	b.run(t, "clear the search", setValue("f-search", ""),
		chromedp.SendKeys(chromedp.ID("f-search"), "1"), poll(`!!`+row("plain1")+` && !!`+row("steer1")))
	if code, out := u.call(t, "POST", "/v1/sessions/steer1/commands?wait=applied", `{"type":"prompt","text":"please look around"}`); code != 200 {
		t.Fatalf("prompt steer1: %d %v", code, out)
	}
	b.run(t, "live status", poll(row("steer1")+`.querySelector(".badge").textContent === "waiting"`))
	b.run(t, "filter by status", setValue("f-status", "waiting"),
		poll(`!!`+row("steer1")+` && !`+row("plain1")))
	if got := eval[[]string](t, b, unnamedControls); len(got) != 0 {
		t.Errorf("the sessions page has controls without a name: %q", got)
	}
	b.screenshot(t, "sessions-filtered")
	if code, out := u.call(t, "POST", "/v1/sessions/steer1/commands?wait=applied", `{"type":"abort"}`); code != 200 {
		t.Fatalf("abort steer1: %d %v", code, out)
	}

	// The session page: tabs by arrow keys, a name on every control.
	b.run(t, "open the session", chromedp.Navigate(base+"/sessions/steer1"),
		chromedp.WaitVisible(chromedp.CSS(`body[data-page="session"][data-loaded="true"][data-stream="live"]`)),
		poll(`document.body.dataset.status === "idle"`))
	b.run(t, "arrow right to the tree", chromedp.Focus(chromedp.ID("t-output")), chromedp.KeyEvent(kb.ArrowRight),
		poll(`document.activeElement.id === "t-tree" && document.getElementById("t-tree").getAttribute("aria-selected") === "true" && !document.getElementById("v-tree").hidden && document.getElementById("v-output").hidden`),
		chromedp.WaitVisible(chromedp.CSS(`#tree[data-loaded="true"]`)))
	if got := eval[[]string](t, b, unnamedControls); len(got) != 0 {
		t.Errorf("the session page has controls without a name: %q", got)
	}
	b.run(t, "arrow left to the output", chromedp.KeyEvent(kb.ArrowLeft),
		poll(`document.activeElement.id === "t-output" && !document.getElementById("v-output").hidden`))

	// A run parks at the approval: busy until the page answers it.
	texts := `[...document.querySelectorAll("#transcript .text")].map(e => e.textContent)`
	b.run(t, "park", chromedp.SendKeys(chromedp.ID("p-text"), "please look around again"), chromedp.Click(chromedp.ID("p-send")),
		poll(`!!document.querySelector("#live .approval")`), poll(`document.body.dataset.status === "waiting"`))
	// The busy policy reject: a prompt is refused as busy, and says so.
	b.run(t, "a prompt while busy is refused", chromedp.SendKeys(chromedp.ID("p-text"), "one more thing"),
		chromedp.Click(chromedp.ID("p-send")),
		poll(`!document.getElementById("alert").hidden && document.getElementById("alert").textContent.startsWith("prompt refused")`))
	// Steer and follow-up queue while it waits.
	b.run(t, "steer", setValue("p-text", "steer now"), chromedp.Click(chromedp.ID("p-steer")),
		poll(`document.getElementById("p-text").value === ""`))
	b.run(t, "follow up", chromedp.SendKeys(chromedp.ID("p-text"), "later please"), chromedp.Click(chromedp.ID("p-follow")),
		poll(`document.getElementById("p-text").value === ""`))
	b.run(t, "approve on the session page", chromedp.Click(chromedp.CSS(`#live .approval button[data-action="approve"]`)),
		poll(eval0(texts)+`.includes("Followed up.")`), poll(`document.body.dataset.status === "idle"`))
	got := eval[[]string](t, b, texts)
	want := []string{"please look around again", "Let me look.", "steer now", "Steered.", "later please", "Followed up."}
	if i := indexOf(got, want[0]); i < 0 || strings.Join(got[i:], "|") != strings.Join(want, "|") {
		t.Errorf("the transcript after steer and follow-up: %q, want it to end with %q", got, want)
	}
	b.screenshot(t, "session-steered")

	// The busy policy follow_up lets a prompt in while busy; abort ends the run.
	b.run(t, "park again", chromedp.SendKeys(chromedp.ID("p-text"), "please look around once more"), chromedp.Click(chromedp.ID("p-send")),
		poll(`!!document.querySelector("#live .approval")`), poll(`document.body.dataset.status === "waiting"`))
	b.run(t, "a prompt with whenBusy follow_up", setValue("p-busy", "follow_up"),
		chromedp.SendKeys(chromedp.ID("p-text"), "queued prompt"), chromedp.Click(chromedp.ID("p-send")),
		poll(`document.getElementById("p-state").textContent.startsWith("prompt sent") || document.getElementById("p-state").textContent.startsWith("Queued")`),
		poll(`document.getElementById("p-text").value === ""`))
	b.run(t, "abort", chromedp.Click(chromedp.ID("p-abort")),
		poll(`document.body.dataset.status === "idle"`),
		poll(`[...document.querySelectorAll("#transcript .role-assistant .notice")].some(e => e.textContent === "aborted")`),
		poll(`!document.querySelector("#live .approval")`))

	// Tool calls: each with its outcome and duration.
	b.run(t, "tool calls", chromedp.Click(chromedp.ID("t-tools")), poll(`document.querySelectorAll("#tools tbody tr").length === 3`))
	calls := eval[[]string](t, b, `[...document.querySelectorAll("#tools tbody tr")].map(tr => tr.cells[1].textContent + " " + tr.cells[3].textContent + " " + tr.cells[4].textContent)`)
	for _, c := range calls {
		f := strings.Fields(c)
		if len(f) != 4 || f[0] != "ls" || f[1] == "" || f[3] != "ms" || strings.Trim(f[2], "0123456789") != "" {
			t.Errorf("a tool call row reads %q, want the tool, an outcome and a duration in ms", c)
		}
	}
	b.screenshot(t, "session-tools")

	// The tree: label a node, navigate back to it with a summary, prompt:
	// the node has two branches, the new one on the active path.
	b.run(t, "tree", chromedp.Click(chromedp.ID("t-tree")), chromedp.WaitVisible(chromedp.CSS(`#tree[data-loaded="true"]`)),
		poll(`[...document.querySelectorAll("#tree .preview")].some(p => p.textContent === "Steered.")`))
	steered := eval[string](t, b, `[...document.querySelectorAll("#tree li")].find(li => li.querySelector(".preview") && li.querySelector(".preview").textContent === "Steered.").dataset.entry`)
	node := `#tree li[data-entry="` + steered + `"] > .node`
	b.run(t, "label", chromedp.Evaluate[chromedp.Void](`(window.prompt = () => "checkpoint", true)`),
		chromedp.Click(chromedp.CSS(node+` button[data-action="label"]`)),
		poll(`(document.querySelector('`+node+` .label') || {}).textContent === "🏷 checkpoint"`))
	b.run(t, "navigate with a summary", chromedp.Click(chromedp.ID("nav-summarize")),
		chromedp.Click(chromedp.CSS(node+` button[data-action="navigate"]`)),
		poll(`[...document.querySelectorAll("#tree .node-type")].some(e => e.textContent === "branch_summary")`))
	b.run(t, "prompt on the new branch", chromedp.Click(chromedp.ID("t-output")),
		chromedp.SendKeys(chromedp.ID("p-text"), "a new branch"), chromedp.Click(chromedp.ID("p-send")),
		poll(eval0(texts)+`.includes("a new branch")`), poll(`document.body.dataset.status === "idle"`),
		chromedp.Click(chromedp.ID("t-tree")),
		poll(`document.querySelectorAll('#tree li[data-entry="`+steered+`"] > ul.branches > li.branch').length === 2`))
	branches := eval[struct{ OnPath, Leaf, Summary bool }](t, b, `(() => {
		const bs = [...document.querySelectorAll('#tree li[data-entry="`+steered+`"] > ul.branches > li.branch')];
		const last = bs[1];
		return {OnPath: !bs[0].querySelector(".on-path") && !!last.querySelector(".on-path"),
			Leaf: !!last.querySelector(".node.leaf"),
			Summary: last.querySelector(".node-type").textContent === "branch_summary"};
	})()`)
	if branches != (struct{ OnPath, Leaf, Summary bool }{true, true, true}) {
		t.Errorf("the branches under the labelled node: %+v, want the new one (a branch summary first) on the active path with the leaf", branches)
	}
	b.screenshot(t, "session-branches")

	// Usage: a second model's day stacks on the first's, one colour each.
	if code, out := u.call(t, "POST", "/v1/sessions/plain1/commands?wait=applied", `{"type":"prompt","text":"hello"}`); code != 200 {
		t.Fatalf("prompt plain1: %d %v", code, out)
	}
	kittest.Eventually(t, 45*time.Second, "the usage of scripted/other", func() error {
		code, out := u.call(t, "GET", "/v1/usage", "")
		if data, _ := json.Marshal(out); code != 200 || !strings.Contains(string(data), `"scripted/other"`) {
			return fmt.Errorf("GET /v1/usage: %d %s", code, data)
		}
		return nil
	})
	b.run(t, "usage of both models", chromedp.Navigate(base+"/usage"),
		poll(`[...document.querySelectorAll("#usage-table tbody td")].some(td => td.textContent === "scripted/other")`))
	bars := eval[struct{ Legend, Colours int }](t, b, `(() => {
		const svg = document.querySelector("#chart-tokens svg");
		const legend = [...svg.querySelectorAll("text")].filter(e => e.textContent.startsWith("scripted/")).length;
		const colours = new Set([...svg.querySelectorAll("rect")].filter(r => r.querySelector("title")).map(r => r.getAttribute("fill"))).size;
		return {Legend: legend, Colours: colours};
	})()`)
	if bars.Legend != 2 || bars.Colours != 2 {
		t.Errorf("the tokens chart holds %d models in its legend and bars of %d colours, want 2 and 2", bars.Legend, bars.Colours)
	}
	b.screenshot(t, "usage-models")
	b.run(t, "back to the tree", chromedp.Navigate(base+"/sessions/steer1"),
		chromedp.WaitVisible(chromedp.CSS(`body[data-loaded="true"]`)), chromedp.Click(chromedp.ID("t-tree")),
		chromedp.WaitVisible(chromedp.CSS(`#tree[data-loaded="true"]`)))

	// Fork: the path from the root to the labelled node, in a new session.
	b.run(t, "fork", chromedp.Evaluate[chromedp.Void](`(window.prompt = () => "steer1-fork", true)`),
		chromedp.Click(chromedp.CSS(node+` button[data-action="fork"]`)),
		chromedp.WaitVisible(chromedp.CSS(`body[data-page="session"][data-session="steer1-fork"][data-loaded="true"]`)))
	forked := eval[[]string](t, b, texts)
	if len(forked) == 0 || forked[len(forked)-1] != "Steered." || indexOf(forked, "later please") >= 0 {
		t.Errorf("the fork's transcript %q, want the path up to %q and nothing after it", forked, "Steered.")
	}
}

// setValue sets a control's value as a person would, with its input event.
func setValue(id, v string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`(e => { e.value = ` + jsString(v) + `; e.dispatchEvent(new Event("input", {bubbles: true})); e.dispatchEvent(new Event("change", {bubbles: true})); return true })(document.getElementById(` + jsString(id) + `))`)
}

// eval0 wraps a JavaScript expression in parentheses, to call methods on it.
func eval0(expr string) string { return "(" + expr + ")" }

func indexOf(xs []string, x string) int {
	for i, s := range xs {
		if s == x {
			return i
		}
	}
	return -1
}
