// Command policyext is a policy service for every agent of a Cairn
// platform, written as an extension (docs/extensions.md): it blocks `bash`
// calls whose command contains `rm -rf`, answers approval "ask" for any
// `write` whose path is outside `src/`, and, with --redact, replaces a
// word in every tool result before the model sees it.
//
//	go run ./examples/policyext --nats nats://127.0.0.1:4222 --seed .cairn/credentials/extension.nk
//
// It registers the handlers policyext-tool-call (tool_call) and
// policyext-redact (tool_result) in the extensions bucket, answers their
// requests on cairn.ext.call.<handler>, prints "policyext ready" and runs
// until SIGINT or SIGTERM, when it unregisters them.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path"
	"strings"
	"syscall"
	"time"

	"github.com/cairn-agents/cairn/pkg/agent/hook"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/extension"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/nats-io/nats.go"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "policyext:", err)
		os.Exit(1)
	}
}

func run() error {
	url := flag.String("nats", envOr("CAIRN_NATS", nats.DefaultURL), "NATS server URL (env CAIRN_NATS)")
	seed := flag.String("seed", os.Getenv("CAIRN_EXTENSION_SEED"), "the extension user's nkey seed file (cairn up: <data>/credentials/extension.nk; env CAIRN_EXTENSION_SEED)")
	tenant := flag.String("tenant", "", "serve only this tenant's sessions (default every tenant)")
	priority := flag.Int("priority", 0, "priority of the handlers (lower runs first)")
	failOpen := flag.Bool("fail-open", false, "let calls through when this service fails (default: block them)")
	redact := flag.String("redact", "", "replace this word in every tool result with [redacted]")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	opts := []nats.Option{nats.Name("policyext")}
	if *seed != "" {
		nk, err := nats.NkeyOptionFromSeed(*seed)
		if err != nil {
			return err
		}
		// The extension user may subscribe only under its own inbox prefix.
		opts = append(opts, nk, nats.CustomInboxPrefix(provision.User{Role: provision.RoleExtension}.InboxPrefix()))
	}
	nc, err := nats.Connect(*url, opts...)
	if err != nil {
		return err
	}
	defer nc.Close()
	x, err := extension.New(ctx, nc)
	if err != nil {
		return err
	}
	h := extension.Handler{Tenant: *tenant, Priority: *priority, FailOpen: *failOpen, Timeout: 2 * time.Second}
	h.Name = "policyext-tool-call"
	if err := extension.Handle(ctx, x, h, toolCall); err != nil {
		return err
	}
	if *redact != "" {
		h.Name = "policyext-redact"
		word := *redact
		if err := extension.Handle(ctx, x, h, func(_ context.Context, c extension.Call[hook.ToolResultEvent]) (hook.ToolResultPatch, error) {
			return redactResult(c.Event, word), nil
		}); err != nil {
			return err
		}
	}
	fmt.Println("policyext ready")
	<-ctx.Done()
	closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return x.Close(closeCtx)
}

// toolCall decides one call: block a `bash` with `rm -rf`, ask a person
// about a `write` outside src/ (docs/approvals.md), leave the rest to the
// session's policy.
func toolCall(_ context.Context, c extension.Call[hook.ToolCallEvent]) (hook.ToolCallResult, error) {
	var args struct {
		Command string `json:"command"`
		Path    string `json:"path"`
	}
	_ = json.Unmarshal(c.Event.Args, &args) // tools without these fields are allowed
	switch c.Event.ToolName {
	case "bash":
		if strings.Contains(args.Command, "rm -rf") {
			return hook.ToolCallResult{Block: true, Reason: "policy: `rm -rf` is not allowed on this platform"}, nil
		}
	case "write":
		if !insideSrc(args.Path) {
			return hook.ToolCallResult{Approval: hook.ApprovalAsk, Reason: "policy: writes outside src/ need a person's approval"}, nil
		}
	}
	return hook.ToolCallResult{}, nil
}

// insideSrc reports whether a workspace path lies under src/.
func insideSrc(p string) bool {
	p = path.Clean(strings.TrimPrefix(p, "./"))
	return strings.HasPrefix(p, "src/") && !strings.HasPrefix(p, "../")
}

// redactResult replaces word in the result's text blocks; no patch when
// the word is absent.
func redactResult(ev hook.ToolResultEvent, word string) hook.ToolResultPatch {
	changed := false
	content := make([]events.Block, len(ev.Content))
	for i, b := range ev.Content {
		if b.Type == events.BlockText && strings.Contains(b.Text, word) {
			b.Text = strings.ReplaceAll(b.Text, word, "[redacted]")
			changed = true
		}
		content[i] = b
	}
	if !changed {
		return hook.ToolResultPatch{}
	}
	return hook.ToolResultPatch{Content: content}
}

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}
