package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// BenchmarkE2EConsole measures the console's pages in Chromium on a
// platform holding 10,000 sessions and one of 5,000 entries (imported as pi
// files): first render of the sessions page and of the big session's page
// (navigation to the page showing its data: the newest 300 entries, the
// rest behind a button), and following a run on the
// big session (the send click to the streamed reply shown). Run it alone:
//
//	go test -run '^$' -bench E2EConsole -benchtime 1x ./cmd/cairn/
func BenchmarkE2EConsole(b *testing.B) {
	chromiumPath(b)
	u := startUpWith(b, consoleScript)
	admin := readAdminKey(b, u)
	importSessions(b, u.url, admin, 10000)
	importBig(b, u.url, admin, "big", 5000)

	br := newBrowser(b, context.Background())
	br.login(b, u.url, admin)
	var list, open, follow time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		br.run(b, "sessions", chromedp.Navigate(u.url+"/"), poll(`document.body.dataset.loaded === "true" && document.querySelectorAll("#sessions tbody tr").length === 200`))
		list += time.Since(start)
		start = time.Now()
		br.run(b, "big session", chromedp.Navigate(u.url+"/sessions/big"), poll(`document.body.dataset.loaded === "true" && !!document.getElementById("earlier")`),
			poll(`document.body.dataset.stream === "live"`))
		open += time.Since(start)
		start = time.Now()
		br.run(b, "follow", chromedp.SendKeys(chromedp.ID("p-text"), fmt.Sprintf("tell a long story %d", i)), chromedp.Click(chromedp.ID("p-send")),
			poll(`[...document.querySelectorAll("#transcript .text")].filter(e => e.textContent.endsWith("THE END.")).length === `+fmt.Sprint(i+1)))
		follow += time.Since(start)
	}
	b.ReportMetric(float64(list.Milliseconds())/float64(b.N), "ms/sessions-page")
	b.ReportMetric(float64(open.Milliseconds())/float64(b.N), "ms/5000-entry-page")
	b.ReportMetric(float64(follow.Milliseconds())/float64(b.N), "ms/followed-run")
}

// importSessions imports n small sessions (a header and one prompt each).
func importSessions(tb testing.TB, base, admin string, n int) {
	tb.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan int)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				id := fmt.Sprintf("bulk-%05d", i)
				file := `{"type":"session","version":3,"id":"` + id + `","timestamp":"2026-01-01T00:00:00.000Z","cwd":"."}` + "\n" +
					`{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hello","timestamp":1767225601000}}` + "\n"
				if err := postImport(base, admin, id, file); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
}

// importBig imports a linear session of n entries, users and assistants in turn.
func importBig(tb testing.TB, base, admin, id string, n int) {
	tb.Helper()
	var sb strings.Builder
	sb.WriteString(`{"type":"session","version":3,"id":"` + id + `","timestamp":"2026-01-01T00:00:00.000Z","cwd":"."}` + "\n")
	parent := "null"
	for i := 0; i < n; i++ {
		role, extra := "user", ""
		if i%2 == 1 {
			role, extra = "assistant", `,"api":"scripted","provider":"scripted","model":"e2e","usage":{"input":10,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":20,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop"`
		}
		eid := fmt.Sprintf("e%05d", i)
		fmt.Fprintf(&sb, `{"type":"message","id":"%s","parentId":%s,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"%s","content":[{"type":"text","text":"message %d of a long session"}]%s,"timestamp":%d}}`+"\n",
			eid, parent, role, i, extra, 1767225601000+int64(i))
		parent = `"` + eid + `"`
	}
	if err := postImport(base, admin, id, sb.String()); err != nil {
		tb.Fatal(err)
	}
}

func postImport(base, admin, id, file string) error {
	req, _ := http.NewRequest("POST", base+"/v1/import?id="+id, strings.NewReader(file))
	req.Header.Set("Authorization", "Bearer "+admin)
	req.Header.Set("Content-Type", "application/x-ndjson")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 201 && resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("import %s: %d %s", id, resp.StatusCode, b)
	}
	return nil
}
