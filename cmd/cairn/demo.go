package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/cairn-agents/cairn/pkg/events"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/spf13/cobra"
)

// startEmbedded starts a platform on free ports for a one-off command. Its
// logs go to logw. stop shuts it down and waits.
func startEmbedded(ctx context.Context, dataDir, workspaceRoot, toolsRoot, script, model string, logw io.Writer) (*platform, func() error, error) {
	pctx, cancel := context.WithCancel(ctx)
	p, err := startPlatform(pctx, platformConfig{DataDir: dataDir, HTTPAddr: "127.0.0.1:0", NATSListen: "127.0.0.1:0",
		WorkspaceRoot: workspaceRoot, ToolsRoot: toolsRoot, Script: script, Model: model,
		Logger: slog.New(slog.NewJSONHandler(logw, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return p, func() error { cancel(); return p.wait() }, nil
}

func newDemoCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "demo",
		Short: "run a demonstration: an embedded platform, several agents at once, an audit at the end",
		Args:  cobra.NoArgs,
	}
	sessions := c.Flags().Int("sessions", 3, "agents to run at once")
	keep := c.Flags().String("data", "", "keep the platform's data in this directory (default: a temporary one, removed)")
	c.RunE = func(cmd *cobra.Command, _ []string) (err error) {
		if *sessions < 1 || *sessions > 100 {
			return usagef("--sessions must be 1-100, got %d", *sessions)
		}
		dir := *keep
		if dir == "" {
			tmp, err := os.MkdirTemp("", "cairn-demo-")
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, os.RemoveAll(tmp)) }()
			dir = tmp
		}
		dir, _ = filepath.Abs(dir)
		return runDemo(cmd.Context(), e.stdout, dir, *sessions)
	}
	return c
}

var demoPrompts = []string{"please list files", "write a note", "run a command"}

func runDemo(ctx context.Context, w io.Writer, dir string, n int) (err error) {
	fmt.Fprintf(w, "== Starting Cairn in one process (embedded NATS, data in %s)\n", dir)
	p, stop, err := startEmbedded(ctx, dir, "", "", "", "scripted/demo", io.Discard)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, stop()) }()
	cl, err := client.New(p.URL, client.WithToken(p.AdminKey.Reveal()))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "   gateway %s, NATS %s, admin key %s\n\n", p.URL, p.NATS, p.KeyFile)

	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("demo-%d", i+1)
		if _, err := cl.CreateSession(ctx, client.CreateSession{ID: ids[i]}, client.WaitApplied()); err != nil {
			return fmt.Errorf("create %s: %w", ids[i], err)
		}
	}
	fmt.Fprintf(w, "== %d sessions created; each runs %d prompts, all at once. Live output of %s:\n\n", n, len(demoPrompts), ids[0])
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 1; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, text := range demoPrompts {
				if err := promptAndFollow(ctx, cl, io.Discard, ids[i], text, "reject"); err != nil {
					errs[i] = fmt.Errorf("%s: %w", ids[i], err)
					return
				}
			}
		}()
	}
	for _, text := range demoPrompts {
		fmt.Fprintf(w, "> %s\n", text)
		if err := promptAndFollow(ctx, cl, w, ids[0], text, "reject"); err != nil {
			errs[0] = err
			break
		}
		fmt.Fprintln(w)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}

	fmt.Fprintf(w, "== Sessions, from the projector's read model\n")
	list, err := cl.ListSessions(ctx, client.ListSessions{})
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tENTRIES\tMESSAGES\tTOOL CALLS")
	for _, s := range list.Sessions {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\n", s.ID, s.Status, s.Entries, s.Messages, s.ToolCalls)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintf(w, "\n== Audit: every session's log is a hash chain\n")
	_, js, err := connectNATS(&natsFlags{URL: p.NATS, Creds: p.Creds}, "cairn-demo", provision.RoleAdmin, nil)
	if err != nil {
		return err
	}
	log, err := session.NewJetStreamLog(ctx, js, session.WithCreate(false))
	if err != nil {
		return err
	}
	for _, id := range ids {
		recs, err := log.Read(ctx, events.DefaultRef(id), 0)
		if err != nil {
			return err
		}
		if bad := session.VerifyChain(recs); len(bad) > 0 {
			return fmt.Errorf("session %s: hash chain broken: %v", id, bad[0])
		}
		fmt.Fprintf(w, "   %s: %d entries, chain verified\n", id, len(recs))
	}

	fmt.Fprintf(w, "\n== The tree of %s, from its log\n", ids[0])
	s, err := session.Load(ctx, log, events.DefaultRef(ids[0]))
	if err != nil {
		return err
	}
	idx, err := s.Index()
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	writeTree(bw, idx.Tree())
	if err := bw.Flush(); err != nil {
		return err
	}

	fmt.Fprintf(w, "\n== Audit of %s's tool calls, from the projector\n", ids[0])
	calls, err := waitAudit(ctx, cl, ids[0])
	if err != nil {
		return err
	}
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tOUTCOME\tDURATION\tSTARTED\tARGUMENTS DIGEST")
	for _, c := range calls {
		fmt.Fprintf(tw, "%s\t%s\t%dms\t%s\t%.23s…\n", c.Tool, c.Outcome, c.DurationMs, c.Started, c.ArgsDigest)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nDone. Run `cairn up` to keep a platform running, then `cairn session new` and `cairn prompt`.\n")
	return nil
}

// waitAudit reads a session's tool-call audit once the projector has caught
// up with every call of the demo (each prompt of the script makes some).
func waitAudit(ctx context.Context, cl *client.Client, sid string) ([]client.ToolCall, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		page, err := cl.ToolCalls(ctx, client.ToolCallFilter{Session: sid})
		if err != nil {
			return nil, err
		}
		if len(page.ToolCalls) >= 5 || time.Now().After(deadline) {
			return page.ToolCalls, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
