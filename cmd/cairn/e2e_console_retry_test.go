package main

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// What the session page shows of a run that does not simply stream a
// reply, in Chromium against `cairn up`, with the page open and never
// reloaded: a model call that fails with a transient error and is retried
// (the retry's notices, then the reply, each once), a model error that is
// not retried (shown as an error, with no retry), and a compaction pressed
// from the prompt box (its summary in the output, once).

const consoleRetryScript = `{
  "defaults": {"contextWindow": 4000, "maxOutput": 1000, "tokensPerSecond": 0},
  "rules": [
    {"match": {"contains": "<conversation>"}, "reply": {"text": "## Goal\nanswer questions about the cairn"}},
    {"match": {"lastRole": "user", "contains": "flaky"}, "times": 1, "reply": {"delayMs": 100, "error": {"status": 529, "message": "overloaded_error"}}},
    {"match": {"lastRole": "user", "contains": "flaky"}, "reply": {"text": "Answered after the retry.", "usage": {"input": 100, "output": 10}}},
    {"match": {"lastRole": "user", "contains": "broken"}, "reply": {"error": {"status": 400, "message": "invalid_request_error: the request names no such field"}}},
    {"reply": {"text": "ok", "usage": {"input": 100, "output": 10}}}
  ]
}`

func TestE2EConsoleRetry(t *testing.T) {
	chromiumPath(t)
	u := startUpWith(t, consoleRetryScript)
	admin := readAdminKey(t, u)
	base := u.url
	if code, out := u.call(t, "POST", "/v1/sessions?wait=applied", `{"id":"retry1"}`); code != 200 {
		t.Fatalf("create: %d %v", code, out)
	}
	b := newBrowser(t, context.Background())
	b.login(t, base, admin)
	// window.cairnSameLoad is gone after any reload of the page.
	b.run(t, "open the session", chromedp.Navigate(base+"/sessions/retry1"),
		chromedp.WaitVisible(chromedp.CSS(`body[data-page="session"][data-loaded="true"][data-stream="live"]`)),
		chromedp.Evaluate[chromedp.Void](`(window.cairnSameLoad = true)`))
	count := func(sel, text string) string {
		return `[...document.querySelectorAll(` + jsString(sel) + `)].filter(e => e.textContent.includes(` + jsString(text) + `)).length`
	}
	type counts struct{ Retrying, Succeeded, Reply, Overloaded, Permanent, Compacted, SameLoad int }
	read := func() counts {
		return eval[counts](t, b, `({
			Retrying: `+count("#transcript .notice.retry", "Retrying (attempt 1 of ")+`,
			Succeeded: `+count("#transcript .notice.retry", "Retry succeeded")+`,
			Reply: `+count("#transcript .role-assistant .text", "Answered after the retry.")+`,
			Overloaded: `+count("#transcript .role-assistant .error", ": overloaded_error")+`,
			Permanent: `+count("#transcript .role-assistant .error", ": invalid_request_error: the request names no such field")+`,
			Compacted: `+count("#transcript .notice.compaction", "Compacted ")+`,
			SameLoad: window.cairnSameLoad === true ? 1 : 0,
		})`)
	}
	settled := `document.body.dataset.status !== "running" && !document.querySelector("#live .streaming")`

	// 1. A transient error, retried: the failed call's error, the retry's
	// notices and the reply, each once, in that order.
	b.run(t, "a prompt whose first call fails", chromedp.SendKeys(chromedp.ID("p-text"), "a flaky question"),
		chromedp.Click(chromedp.ID("p-send")),
		poll(count("#transcript .role-assistant .text", "Answered after the retry.")+` > 0`),
		poll(count("#transcript .notice.retry", "Retry succeeded")+` > 0`),
		poll(`document.body.dataset.status === "idle"`))
	if got := read(); got != (counts{Retrying: 1, Succeeded: 1, Reply: 1, Overloaded: 1, SameLoad: 1}) {
		t.Errorf("after the retried call the page shows %+v, want the error, both retry notices and the reply once each", got)
	}
	order := eval[[]string](t, b, `[...document.querySelectorAll("#transcript > li")].slice(-4).map(li =>
		li.classList.contains("notice") ? li.textContent : (li.querySelector(".text, .error") || li).textContent)`)
	if len(order) != 4 || !strings.HasPrefix(order[0], "Error: ") || !strings.HasSuffix(order[0], ": overloaded_error") || !strings.HasPrefix(order[1], "Retrying (attempt 1 of ") ||
		!strings.HasSuffix(order[1], ": overloaded_error") || order[2] != "Answered after the retry." || order[3] != "Retry succeeded" {
		t.Errorf("the output ends with %q, want the error, the retry notice, the reply, the retry's success", order)
	}
	b.screenshot(t, "session-retry")

	// 3. A permanent error: shown as an error, not retried.
	b.run(t, "a prompt whose call fails for good", chromedp.SendKeys(chromedp.ID("p-text"), "a broken question"),
		chromedp.Click(chromedp.ID("p-send")),
		poll(count("#transcript .role-assistant .error", ": invalid_request_error")+` > 0`),
		poll(settled))
	if got := read(); got != (counts{Retrying: 1, Succeeded: 1, Reply: 1, Overloaded: 1, Permanent: 1, SameLoad: 1}) {
		t.Errorf("after the permanent error the page shows %+v, want its error once and no new retry", got)
	}

	// 2. Compact: two long runs give the compaction history to summarize
	// (it keeps the newer); the Compact button's compaction shows in the
	// output with its summary, once, without the run's end to read the log.
	long := strings.Repeat("an earlier question, at length. ", 200)
	for i := range 2 {
		b.run(t, "a long prompt", setValue("p-text", long), chromedp.Click(chromedp.ID("p-send")),
			poll(`document.getElementById("p-text").value === ""`),
			poll(count("#transcript .role-assistant .text", "ok")+` === `+strconv.Itoa(i+1)), poll(settled))
	}
	b.run(t, "compact", chromedp.Click(chromedp.ID("p-compact")),
		poll(count("#transcript .notice.compaction", "Compacted ")+` > 0`),
		poll(`document.getElementById("p-state").textContent.startsWith("compact applied")`),
		poll(`!document.querySelector("#live .compacting")`))
	if got := read(); got != (counts{Retrying: 1, Succeeded: 1, Reply: 1, Overloaded: 1, Permanent: 1, Compacted: 1, SameLoad: 1}) {
		t.Errorf("after the compaction the page shows %+v, want the compaction once and the rest as before", got)
	}
	notice := eval[string](t, b, `document.querySelector("#transcript .notice.compaction").textContent`)
	if f := strings.Fields(notice); len(f) < 4 || f[2] != "tokens:" || f[1] == "0" || !strings.HasSuffix(notice, "tokens: ## Goal\nanswer questions about the cairn") {
		t.Errorf("the compaction reads %q, want the tokens it compacted and its summary", notice)
	}
	// The log read at the next run's end adds no second compaction.
	before := eval[string](t, b, `document.body.dataset.settled || ""`)
	b.run(t, "a prompt after the compaction", chromedp.SendKeys(chromedp.ID("p-text"), "after"),
		chromedp.Click(chromedp.ID("p-send")),
		poll(count("#transcript .role-assistant .text", "ok")+` === 3`), poll(settled),
		poll(`(document.body.dataset.settled || "") !== `+jsString(before)))
	if got := read(); got.Compacted != 1 || got.SameLoad != 1 {
		t.Errorf("after the next run the page shows %+v, want the compaction still once", got)
	}
	b.screenshot(t, "session-compacted")
}
