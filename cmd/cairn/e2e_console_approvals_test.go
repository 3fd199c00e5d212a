package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The console's approvals against real approvals (docs/approvals.md): a
// session whose policy asks for ls parks its run; the inbox lists the
// pending call; approved there with edited arguments, the run finishes on
// the session page open in another browser, without a reload; denied there
// with a reason, the session page shows the error result naming who
// denied it; a viewer sees the inbox without one button.

const consoleApprovalsScript = `{
  "defaults": {"usage": "estimate", "tokensPerSecond": 0},
  "rules": [
    {"match": {"lastRole": "user", "contains": "look around"},
     "reply": {"text": "Let me look.", "toolCalls": [{"name": "ls", "arguments": {"path": "."}}]}},
    {"match": {"lastRole": "toolResult", "tool": "ls"}, "reply": {"text": "Looked around."}},
    {"reply": {"text": "ok"}}
  ]
}`

func TestE2EConsoleApprovals(t *testing.T) {
	chromiumPath(t)
	u := startUpWith(t, consoleApprovalsScript)
	admin := readAdminKey(t, u)
	base := u.url
	if code, out := u.call(t, "POST", "/v1/sessions?wait=applied", `{"id":"ask1","approvals":{"tools":{"ls":"ask"}}}`); code != 200 {
		t.Fatalf("create a session asking for ls: %d %v", code, out)
	}

	// The session page, open in one browser: the run parks, shown live.
	page := newBrowser(t, context.Background())
	page.login(t, base, admin)
	park := func(what string) string {
		t.Helper()
		page.run(t, what, chromedp.SendKeys(chromedp.ID("p-text"), "please look around"),
			chromedp.Click(chromedp.ID("p-send")),
			poll(`!!document.querySelector("#live .approval")`),
			poll(`document.body.dataset.status === "waiting"`))
		return eval[string](t, page, `document.querySelector("#live .approval").dataset.toolCall`)
	}
	page.run(t, "open the session", chromedp.Navigate(base+"/sessions/ask1"),
		chromedp.WaitVisible(chromedp.CSS(`body[data-page="session"][data-loaded="true"]`)),
		chromedp.WaitVisible(chromedp.CSS(`body[data-stream="live"]`)))
	call := park("prompt until the run parks")
	if got := eval[string](t, page, `document.querySelector("#live .approval").textContent`); !strings.Contains(got, "ls") || !strings.Contains(got, `"path": "."`) {
		t.Errorf("the session page's approval box shows %q, want the tool and its arguments", got)
	}

	// The inbox, in a second browser logged in with the same key.
	inbox := newBrowser(t, context.Background())
	inbox.login(t, base, admin)
	item := `#approvals li.approval[data-tool-call="` + call + `"]`
	inbox.run(t, "the inbox lists the call", chromedp.Navigate(base+"/approvals"),
		poll(`!!document.querySelector('`+item+`')`))
	inbox.run(t, "the card names the session, the tool and when it was asked",
		poll(`document.querySelector('`+item+` h2').textContent === "ask1 · ls"`),
		poll(`document.querySelector('`+item+` p.muted').textContent.startsWith("asked ")`))
	inbox.screenshot(t, "approvals")

	// Approve with edited arguments: the run finishes on the session page.
	inbox.run(t, "approve edited",
		chromedp.SetValue(chromedp.CSS(item+" textarea"), `{"path": ".", "limit": 1}`),
		chromedp.Click(chromedp.CSS(item+` button[data-action="approve"]`)),
		poll(`!document.querySelector('`+item+`')`))
	page.run(t, "the run finishes without a reload",
		poll(`[...document.querySelectorAll("#transcript .role-assistant .text")].some(e => e.textContent === "Looked around.")`),
		poll(`document.body.dataset.status === "idle"`),
		poll(`!document.querySelector("#live .approval")`))
	code, out := u.call(t, "GET", "/v1/approvals?status=approved&session=ask1", "")
	approved, _ := out["approvals"].([]any)
	if code != 200 || len(approved) != 1 {
		t.Fatalf("approved approvals of ask1: %d %v, want one", code, out)
	}
	edited, _ := json.Marshal(approved[0].(map[string]any)["editedArguments"])
	if string(edited) != `{"limit":1,"path":"."}` {
		t.Errorf("the approval recorded edited arguments %s, want the inbox's edit", edited)
	}

	// Deny with a reason: the error result names who denied it and why.
	call = park("prompt until the run parks again")
	item = `#approvals li.approval[data-tool-call="` + call + `"]`
	inbox.run(t, "deny with a reason", poll(`!!document.querySelector('`+item+`')`),
		chromedp.SendKeys(chromedp.CSS(item+" input"), "not today"),
		chromedp.Click(chromedp.CSS(item+` button[data-action="deny"]`)),
		poll(`!document.querySelector('`+item+`')`))
	page.run(t, "the denial shows",
		poll(`[...document.querySelectorAll("#transcript .role-toolResult")].some(e => e.textContent.includes("was denied by key:") && e.textContent.includes("not today"))`),
		poll(`document.body.dataset.status === "idle"`))
	page.screenshot(t, "session-denied")

	// A viewer sees a pending call in the inbox, without one button.
	call = park("park a third time")
	viewer := newBrowser(t, context.Background())
	viewer.login(t, base, createKey(t, base, admin, "viewer"))
	item = `#approvals li.approval[data-tool-call="` + call + `"]`
	viewer.run(t, "the viewer's inbox", chromedp.Navigate(base+"/approvals"), poll(`!!document.querySelector('`+item+`')`))
	if n := eval[int](t, viewer, `document.querySelectorAll("#approvals button, #approvals textarea, #approvals input").length`); n != 0 {
		t.Errorf("a viewer's inbox holds %d controls, want none", n)
	}
	if got := eval[string](t, viewer, `document.querySelector('`+item+` pre.args').textContent`); !strings.Contains(got, `"path": "."`) {
		t.Errorf("the viewer's inbox shows arguments %q", got)
	}
	viewer.screenshot(t, "approvals-viewer")
}
