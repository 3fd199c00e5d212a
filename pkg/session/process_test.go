package session_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
)

const (
	writerEnv   = "CAIRN_SESSION_WRITER" // "<nats url> <session> <name> <count>"
	procEntries = 100
)

// writerProcess is the child side: load the session, say "ready", wait for
// "go" on stdin, then append count entries, reloading after each conflict.
// It prints "conflicts N" and exits 0, or prints the error and exits 1.
func writerProcess() int {
	f := strings.Fields(os.Getenv(writerEnv))
	if len(f) != 4 {
		fmt.Println("bad", writerEnv)
		return 1
	}
	url, sid, name := f[0], f[1], f[2]
	count, _ := strconv.Atoi(f[3])
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nc, err := nats.Connect(url)
	if err != nil {
		fmt.Println("connect:", err)
		return 1
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	l, err := session.NewJetStreamLog(ctx, js)
	if err != nil {
		fmt.Println("log:", err)
		return 1
	}
	s, err := session.Load(ctx, l, events.DefaultRef(sid))
	if err != nil {
		fmt.Println("load:", err)
		return 1
	}
	fmt.Println("ready")
	if line, _ := bufio.NewReader(os.Stdin).ReadString('\n'); strings.TrimSpace(line) != "go" {
		fmt.Println("no go")
		return 1
	}
	conflicts := 0
	for i := 0; i < count; {
		e := events.Entry{Type: events.EntryMessage, ID: fmt.Sprintf("%s-%03d", name, i),
			Message: &events.Message{Role: events.RoleUser, Content: events.TextContent(name)}}
		_, err := s.Append(ctx, e)
		switch {
		case err == nil:
			i++
		case errors.Is(err, session.ErrConflict):
			conflicts++
			if s, err = session.Load(ctx, l, events.DefaultRef(sid)); err != nil {
				fmt.Println("reload:", err)
				return 1
			}
		default:
			fmt.Println("append:", err)
			return 1
		}
	}
	fmt.Println("conflicts", conflicts)
	return 0
}

// Two OS processes append to one session at once. Both start from the same
// loaded state, so the first appends race and one of them must lose with
// ErrConflict; each writer then reloads and goes on. The log ends with every
// entry exactly once, each appended on top of the one before it.
func TestTwoProcessesAppendToOneSession(t *testing.T) {
	srv := natstest.RunServer(t)
	_, js := natstest.JetStream(t, srv.Server)
	ctx := context.Background()
	l, err := session.NewJetStreamLog(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := session.Create(ctx, l, events.Entry{ID: "shared"}); err != nil {
		t.Fatal(err)
	}
	type child struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   *bufio.Reader
	}
	var children []child
	for _, name := range []string{"p1", "p2"} {
		cmd := kittest.Command("writer", fmt.Sprintf("%s=%s shared %s %d", writerEnv, srv.ClientURL(), name, procEntries))
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill() // it may have exited already
			_ = cmd.Wait()         // "signal: killed", or its exit
		})
		children = append(children, child{cmd, stdin, bufio.NewReader(stdout)})
	}
	for i, c := range children {
		if line, _ := c.out.ReadString('\n'); strings.TrimSpace(line) != "ready" {
			t.Fatalf("writer %d: %q, want ready", i+1, line)
		}
	}
	for _, c := range children {
		if _, err := io.WriteString(c.stdin, "go\n"); err != nil {
			t.Fatal(err)
		}
	}
	conflicts := make([]int, len(children))
	var wg sync.WaitGroup
	errs := make([]error, len(children))
	for i, c := range children {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rest, _ := io.ReadAll(c.out)
			if err := c.cmd.Wait(); err != nil {
				errs[i] = fmt.Errorf("writer %d: %v: %s", i+1, err, rest)
				return
			}
			if _, err := fmt.Sscanf(string(rest), "conflicts %d", &conflicts[i]); err != nil {
				errs[i] = fmt.Errorf("writer %d said %q", i+1, rest)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if conflicts[0]+conflicts[1] == 0 {
		t.Fatal("no writer saw ErrConflict, but both appended from the same state")
	}
	recs, err := l.Read(ctx, events.DefaultRef("shared"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+2*procEntries {
		t.Fatalf("log holds %d records, want %d", len(recs), 1+2*procEntries)
	}
	seen := map[string]bool{}
	next := map[string]int{}
	for i, r := range recs[1:] {
		id := r.Entry.ID
		if seen[id] {
			t.Fatalf("entry %s is in the log twice", id)
		}
		seen[id] = true
		name, num, _ := strings.Cut(id, "-")
		if n, _ := strconv.Atoi(num); n != next[name] {
			t.Fatalf("writer %s's entries out of order: %s where %d was next", name, id, next[name])
		}
		next[name]++
		if i > 0 && (r.Entry.ParentID == nil || *r.Entry.ParentID != recs[i].Entry.ID) {
			t.Fatalf("entry %s was appended on a stale view: parent %v, previous entry %s", id, r.Entry.ParentID, recs[i].Entry.ID)
		}
	}
	if probs := session.VerifyChain(recs); probs != nil {
		t.Fatalf("chain: %v", probs[0])
	}
	t.Logf("conflicts: %d and %d", conflicts[0], conflicts[1])
}
