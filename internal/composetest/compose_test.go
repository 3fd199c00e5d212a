//go:build compose

package composetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/invariants"
	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
)

// compose runs docker-compose (Debian's 1.29, or CAIRN_COMPOSE) on the
// project.
type compose struct {
	t       *testing.T
	dir     string // deploy/
	project string

	mu       sync.Mutex
	failures []string // first lines of errorf's messages, repeated last
}

// errorf is t.Errorf, remembered: when the test fails, the first line of
// each message is repeated after the compose logs, so the end of the
// output (all a CI summary may show) names what failed.
func (c *compose) errorf(format string, args ...any) {
	c.t.Helper()
	msg := fmt.Sprintf(format, args...)
	first, _, _ := strings.Cut(msg, "\n")
	c.mu.Lock()
	c.failures = append(c.failures, first)
	c.mu.Unlock()
	c.t.Error(msg)
}

func (c *compose) run(ctx context.Context, args ...string) (string, error) {
	bin := os.Getenv("CAIRN_COMPOSE")
	if bin == "" {
		bin = "docker-compose"
	}
	full := append(strings.Fields(bin)[1:], append([]string{"-p", c.project, "-f", filepath.Join(c.dir, "compose.yaml")}, args...)...)
	cmd := exec.CommandContext(ctx, strings.Fields(bin)[0], full...)
	cmd.Env = append(os.Environ(), "CAIRN_GATEWAY_PUBLISH=127.0.0.1:")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w\n%s", bin, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// project is a fresh compose project of deploy/compose.yaml, torn down
// (down -v) when the test ends, failed or not, and the admin key.
func project(t *testing.T) (*compose, string) {
	t.Helper()
	dir, err := filepath.Abs("../../deploy")
	if err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile(filepath.Join(dir, ".secrets", "admin.key"))
	if err != nil {
		t.Fatalf("the admin key: %v (make compose-secrets)", err)
	}
	c := &compose{t: t, dir: dir, project: fmt.Sprintf("cairn%d", os.Getpid())}
	t.Cleanup(func() {
		dctx, dcancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer dcancel()
		if t.Failed() {
			out, _ := c.run(dctx, "logs", "--no-color", "--timestamps")
			path := filepath.Join(os.TempDir(), c.project+"-logs.txt")
			if err := os.WriteFile(path, []byte(out), 0o600); err != nil {
				t.Errorf("keeping the compose logs: %v", err)
			}
			tail := strings.Split(strings.TrimSpace(out), "\n")
			tail = tail[len(tail)-min(len(tail), 30):]
			t.Logf("compose logs, all in %s, the last lines:\n%s", path, strings.Join(tail, "\n"))
			c.mu.Lock()
			if len(c.failures) > 0 {
				t.Logf("what failed (%d, each in full above):\n%s", len(c.failures), strings.Join(c.failures, "\n"))
			}
			c.mu.Unlock()
		}
		if out, err := c.run(dctx, "down", "-v", "--remove-orphans", "-t", "5"); err != nil {
			t.Errorf("tear down: %v\n%s", err, out)
		}
	})
	return c, strings.TrimSpace(string(key))
}

func TestComposeSmoke(t *testing.T) {
	cl, _, ctx := up(t, 8*time.Minute)
	const sessions = 6
	acked := map[string][]string{}
	for i := range sessions {
		sid := fmt.Sprintf("smoke-%d", i)
		cid := events.NewID()
		waitFor(t, ctx, "session "+sid+" to be created", func() error {
			// The same command id on every try: the gateway stores it once.
			_, err := cl.CreateSession(ctx, client.CreateSession{ID: sid, CommandID: cid}, client.WaitApplied())
			if errors.Is(err, client.ErrInvalid) {
				t.Fatalf("create %s: %v", sid, err)
			}
			return err
		})
		acked[sid] = append(acked[sid], cid)
		for _, text := range []string{"please list files", "write a note"} {
			cmd := client.Prompt(text)
			cmd.ID = events.NewID()
			if _, err := cl.Send(ctx, sid, cmd, client.WaitApplied()); err != nil {
				t.Fatalf("%s: prompt %q: %v", sid, text, err)
			}
			acked[sid] = append(acked[sid], cmd.ID)
			waitFor(t, ctx, sid+" to settle", func() error { return settled(ctx, cl, sid, cmd.ID) })
		}
	}
	calls := 0
	for sid, ids := range acked {
		recs := records(t, ctx, cl, sid)
		st, problems := invariants.Check(sid, recs, ids)
		for _, p := range problems {
			t.Error(p)
		}
		calls += st.ToolCalls
		v, err := cl.VerifySession(ctx, sid)
		if err != nil || !v.OK() {
			t.Errorf("%s: chain: %v %v", sid, err, v.Problems)
		}
	}
	if calls == 0 {
		t.Error("no tool call ran: the toolrunners did nothing")
	}
	t.Logf("FIGURES compose-smoke sessions=%d tool-calls=%d", sessions, calls)
}

// settled is nil once the command is named in the log and the session idle.
func settled(ctx context.Context, cl *client.Client, sid, cid string) error {
	recs, err := cl.Records(ctx, sid)
	if err != nil {
		return err
	}
	srecs := toSession(recs)
	if invariants.Names(srecs)[cid] == 0 || !invariants.Idle(srecs) {
		return fmt.Errorf("command %s not applied, or the session still runs (%d entries)", cid, len(recs))
	}
	return nil
}

func records(t *testing.T, ctx context.Context, cl *client.Client, sid string) []session.Record {
	t.Helper()
	recs, err := cl.Records(ctx, sid)
	if err != nil {
		t.Fatalf("%s: records: %v", sid, err)
	}
	return toSession(recs)
}

func toSession(recs []client.Record) []session.Record {
	out := make([]session.Record, len(recs))
	for i, r := range recs {
		out[i] = session.Record{Seq: r.Seq, Entry: r.Entry, Data: r.Data, Digest: session.Digest(r.Data)}
	}
	return out
}

// waitFor polls f until it returns nil, failing the test with f's last
// error when ctx ends.
func waitFor(t *testing.T, ctx context.Context, what string, f func() error) {
	t.Helper()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		err := f()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, err)
		case <-tick.C:
		}
	}
}
