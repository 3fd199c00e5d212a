package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

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
	c.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		cl, err := clientFrom(cmd)
		if err != nil {
			return err
		}
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
			defer os.RemoveAll(data)
			p, stop, err := startEmbedded(ctx, data, cwd, *script, *model, e.stderr)
			if err != nil {
				return err
			}
			defer stop()
			cl, _ = newClient(p.URL)
			cl.remote = false
		}
		var out struct{ ID string }
		body := map[string]any{"model": *model}
		if !gatewayIsRemote(cl) {
			body["workspace"] = "."
		}
		if err := cl.do(ctx, "POST", "/v1/sessions?wait=applied", body, &out); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "session %s\n", out.ID)
		return promptAndFollow(ctx, cl, e.stdout, out.ID, args[0], "reject")
	}
	return c
}

// gatewayAnswers reports whether a gateway answers /healthz quickly.
func gatewayAnswers(ctx context.Context, cl *client) bool {
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", cl.base+"/healthz", nil)
	if err != nil {
		return false
	}
	resp, err := cl.http.Do(req)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == 200
}

// gatewayIsRemote is false for the embedded platform cairn run starts,
// whose workspace root is the current directory.
func gatewayIsRemote(cl *client) bool { return cl.remote }
