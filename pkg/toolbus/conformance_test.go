package toolbus_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/tool"
	"github.com/cairn-agents/cairn/pkg/toolbus"
)

// executors is what the conformance suite runs against: an echo tool and a
// tool that blocks until cancelled.
type executors struct {
	echo, block tool.Tool
}

// testExecutor checks what the agent loop relies on from any tool executor,
// in process or remote.
func testExecutor(t *testing.T, x executors) {
	t.Run("result", func(t *testing.T) {
		res, err := x.echo.Execute(context.Background(), tool.Call{ID: "c-result", Name: "echo", SessionID: "s1",
			Arguments: []byte(`{"text":"hi"}`)}, func(tool.Result) {})
		if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].Text != "hi" {
			t.Fatalf("Execute = %+v, %v", res, err)
		}
	})
	t.Run("updates before the result", func(t *testing.T) {
		var mu sync.Mutex
		var got []string
		res, err := x.echo.Execute(context.Background(), tool.Call{ID: "c-update", Name: "echo", SessionID: "s1",
			Arguments: []byte(`{"text":"yo"}`)}, func(r tool.Result) {
			mu.Lock()
			got = append(got, r.Content[0].Text)
			mu.Unlock()
		})
		if err != nil || res.Content[0].Text != "yo" {
			t.Fatalf("Execute = %+v, %v", res, err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(got) != 1 || got[0] != "partial yo" {
			t.Errorf("updates = %q, want [partial yo]", got)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		var res tool.Result
		var err error
		go func() {
			defer close(done)
			res, err = x.block.Execute(ctx, tool.Call{ID: "c-cancel", Name: "block", SessionID: "s1",
				Arguments: []byte(`{}`)}, func(tool.Result) {})
		}()
		started := x.block.(interface{ startedCh() chan string }).startedCh()
		select {
		case <-started:
		case <-time.After(20 * time.Second):
			t.Fatal("the call never started")
		}
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("Execute did not return after cancel")
		}
		if err == nil && !res.IsError {
			t.Errorf("cancelled Execute = %+v, nil; want an error or an error result", res)
		}
	})
}

func (b *blockTool) startedCh() chan string { return b.started }

// remoteBlock is a Remote whose started channel is the served tool's.
type remoteBlock struct {
	*toolbus.Remote
	served *blockTool
}

func (r remoteBlock) startedCh() chan string { return r.served.started }

func TestExecutorConformanceInProcess(t *testing.T) {
	testExecutor(t, executors{echo: echoTool{}, block: newBlockTool("block", true)})
}

func TestExecutorConformanceRemote(t *testing.T) {
	e := newEnv(t)
	served := newBlockTool("block", true)
	e.start(t, e.newBus(t), toolbus.Worker{Pool: "p", Tools: []tool.Tool{echoTool{}, served}})
	ctx := context.Background()
	echo, err := e.bus.RemoteTool(ctx, "echo")
	if err != nil {
		t.Fatal(err)
	}
	block, err := e.bus.RemoteTool(ctx, "block")
	if err != nil {
		t.Fatal(err)
	}
	if echo.Spec().Name != "echo" || !echo.Spec().Idempotent || echo.Pool != "p" {
		t.Errorf("remote spec = %+v in pool %q", echo.Spec(), echo.Pool)
	}
	testExecutor(t, executors{echo: echo, block: remoteBlock{Remote: block, served: served}})
	if _, err := e.bus.RemoteTool(ctx, "missing"); err == nil {
		t.Error("RemoteTool(missing) succeeded")
	}
	var _ tool.Tool = (*toolbus.Remote)(nil)
}
