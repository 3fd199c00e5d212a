package compactor_test

import (
	"bufio"
	"context"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/agent/agenttest"
	"github.com/cairn-agents/cairn/pkg/agent/harness"
	"github.com/cairn-agents/cairn/pkg/compactbus"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/nats-io/nats.go/jetstream"
)

// proc is a compactor in a child process; its log lines are kept.
type proc struct {
	cmd *exec.Cmd
	mu  sync.Mutex
	log []string
	wg  sync.WaitGroup
}

func (p *proc) logged(s string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.log {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

func startProc(t *testing.T, url, name, script string) *proc {
	t.Helper()
	cmd := kittest.Command("compactor", "CAIRN_TEST_NATS="+url, "CAIRN_TEST_NAME="+name,
		"CAIRN_TEST_SCRIPT="+script, "CAIRN_TEST_ACKWAIT_MS=1000")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd}
	read := func(r interface{ Read([]byte) (int, error) }) {
		defer p.wg.Done()
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			p.mu.Lock()
			p.log = append(p.log, sc.Text())
			p.mu.Unlock()
		}
	}
	p.wg.Add(2)
	go read(stdout)
	go read(stderr)
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		p.wg.Wait()
		_ = cmd.Wait()
	})
	waitFor(t, name+" ready", func() bool { return p.logged("READY") })
	return p
}

// The summary takes 3 s; the worker's AckWait is 1 s, so only in-progress
// acknowledgements keep the request with it.
const slowScript = `{"defaults":{"contextWindow":4000,"maxOutput":1000,"usage":"estimate"},"rules":[
 {"match":{"contains":"<conversation>"},"reply":{"text":"## Goal\nthe slow summary","delayMs":3000}},
 {"reply":{"text":"ok"}}]}`

func TestKilledCompactorsSummaryIsFinishedByAnother(t *testing.T) {
	p := newPlatform(t)
	a := startProc(t, p.url, "alpha", slowScript)
	m, err := newModels([]byte(slowScript))
	if err != nil {
		t.Fatal(err)
	}
	client, err := compactbus.New(p.nc, eventsNames)
	if err != nil {
		t.Fatal(err)
	}
	_, model, _ := m.Resolve("scripted/small")
	const sid = "kill-session"
	sess := agenttest.NewSession()
	h, err := harness.New(context.Background(), harness.Config{SessionID: sid, Session: sess,
		Providers: map[string]llm.Provider{"scripted": m.p}, Model: model, Compactor: compactorFor(client, sid), ReserveTokens: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// 4 × 750 tokens: within the 4000-token window, so no reply is a silent
	// overflow the harness would compact on its own before the manual one.
	for i := 0; i < 4; i++ {
		if err := h.Prompt(ctx, events.Message{Role: events.RoleUser, Content: events.TextContent("question " + strings.Repeat("y", 3000))}); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- h.Compact(ctx, "") }()
	waitFor(t, "alpha to start the summary", func() bool { return a.logged("summary started") })
	b := startProc(t, p.url, "beta", slowScript)
	if err := a.cmd.Process.Kill(); err != nil { // SIGKILL: no cleanup, no nak
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Compact: %v", err)
	}
	waitFor(t, "beta to log the summary done", func() bool { return b.logged("summary done") && b.logged("delivery=2") })
	if a.logged("summary done") {
		t.Fatal("alpha, killed mid-summary, finished it")
	}
	n := 0
	for _, e := range sess.Entries() {
		if e.Type == events.EntryCompaction {
			n++
			if !strings.HasPrefix(e.Summary, "## Goal\nthe slow summary") {
				t.Fatalf("summary %q", e.Summary)
			}
		}
	}
	if n != 1 {
		t.Fatalf("%d compaction entries, want exactly 1", n)
	}
	// One result stored for the request: alpha died before storing any.
	s, err := p.js.Stream(ctx, eventsNames.ResultsStream())
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(eventsNames.ResultSubject(events.DefaultRef(sid))))
	if err != nil {
		t.Fatal(err)
	}
	if got := info.State.Subjects[eventsNames.ResultSubject(events.DefaultRef(sid))]; got != 1 {
		t.Fatalf("%d results stored for the session, want 1", got)
	}
}
