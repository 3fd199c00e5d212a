package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/spf13/cobra"
)

func newRunCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "run TEXT",
		Short: "run one prompt to completion (on the gateway at --server, or an embedded platform if none answers)",
		Args:  cobra.ExactArgs(1),
	}
	script := c.Flags().String("script", envOr("CAIRN_SCRIPT", ""), "script file of the scripted provider (env CAIRN_SCRIPT)")
	model := c.Flags().String("model", envOr("CAIRN_MODEL", "scripted/demo"), "model, provider/model (env CAIRN_MODEL)")
	c.RunE = func(cmd *cobra.Command, args []string) (err error) {
		ctx := cmd.Context()
		cl, err := clientFrom(cmd)
		if err != nil {
			return err
		}
		// An embedded platform's workspace root is the current directory.
		embedded := false
		if !gatewayAnswers(ctx, cl) {
			// The current directory is the workspace root and the workspace.
			cwd, err := os.Getwd()
			if err != nil {
				return err
			}
			data, err := os.MkdirTemp("", "cairn-run-")
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, os.RemoveAll(data)) }()
			p, stop, err := startEmbedded(ctx, data, cwd, *script, *model, e.stderr)
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, stop()) }()
			if cl, err = client.New(p.URL, client.WithToken(p.AdminKey.Reveal())); err != nil {
				return err
			}
			embedded = true
		}
		req := client.CreateSession{Model: *model}
		if embedded {
			req.Workspace = "."
		}
		out, err := cl.CreateSession(ctx, req, client.WaitApplied())
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "session %s\n", out.SessionID)
		return promptAndFollow(ctx, cl, e.stdout, out.SessionID, args[0], "reject")
	}
	return c
}

// gatewayAnswers reports whether a gateway answers /healthz quickly.
func gatewayAnswers(ctx context.Context, cl *client.Client) bool {
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	return cl.Health(ctx) == nil
}
