package main

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Issue 36: a model whose tool-call arguments come across several lines
// (the script's are pretty-printed) and a policy that asks for the tool.
// Approved, the run goes on and the session page reads its log without the
// "Reading the log failed" banner: the approval_requested entry is one
// line of /entries?format=jsonl like every other.
const consoleOneLineScript = `{
  "defaults": {"usage": "estimate", "tokensPerSecond": 0},
  "rules": [
    {"match": {"lastRole": "user", "contains": "look around"},
     "reply": {"text": "Let me look.", "toolCalls": [{"name": "ls", "arguments": {
        "path":	"."
     }}]}},
    {"match": {"lastRole": "toolResult", "tool": "ls"}, "reply": {"text": "Looked around."}},
    {"reply": {"text": "ok"}}
  ]
}`

func TestE2EConsolePrettyArgumentsApproved(t *testing.T) {
	chromiumPath(t)
	u := startUpWith(t, consoleOneLineScript)
	admin := readAdminKey(t, u)
	base := u.url
	if code, out := u.call(t, "POST", "/v1/sessions?wait=applied", `{"id":"pretty1","approvals":{"tools":{"ls":"ask"}}}`); code != 200 {
		t.Fatalf("create a session asking for ls: %d %v", code, out)
	}
	page := newBrowser(t, context.Background())
	page.login(t, base, admin)
	page.run(t, "open the session", chromedp.Navigate(base+"/sessions/pretty1"),
		chromedp.WaitVisible(chromedp.CSS(`body[data-page="session"][data-loaded="true"]`)),
		chromedp.WaitVisible(chromedp.CSS(`body[data-stream="live"]`)))
	page.run(t, "prompt until the run parks", chromedp.SendKeys(chromedp.ID("p-text"), "please look around"),
		chromedp.Click(chromedp.ID("p-send")),
		poll(`!!document.querySelector("#live .approval")`),
		poll(`document.body.dataset.status === "waiting"`))
	call := eval[string](t, page, `document.querySelector("#live .approval").dataset.toolCall`)

	inbox := newBrowser(t, context.Background())
	inbox.login(t, base, admin)
	item := `#approvals li.approval[data-tool-call="` + call + `"]`
	inbox.run(t, "approve in the inbox", chromedp.Navigate(base+"/approvals"),
		poll(`!!document.querySelector('`+item+`')`),
		chromedp.Click(chromedp.CSS(item+` button[data-action="approve"]`)),
		poll(`!document.querySelector('`+item+`')`))

	page.run(t, "the transcript updates from the log",
		poll(`[...document.querySelectorAll("#transcript .role-assistant .text")].some(e => e.textContent === "Looked around.")`),
		poll(`document.body.dataset.status === "idle"`))
	page.run(t, "the page reads the whole log again", chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`body[data-page="session"][data-loaded="true"]`)),
		poll(`[...document.querySelectorAll("#transcript .role-assistant .text")].some(e => e.textContent === "Looked around.")`))
	if got := eval[string](t, page, `document.body.innerText`); strings.Contains(got, "Reading the log failed") {
		t.Errorf("the session page shows the log reading banner: %q", got)
	}
}
