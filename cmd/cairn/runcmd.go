package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/workspace"
	"github.com/spf13/cobra"
)

// `cairn run` works on the current directory itself (DESIGN §7).
//
// Embedded (no gateway answers at --server): the platform's data lives in a
// temporary directory outside the current one, and its workspace root holds
// the default tenant's root as a symlink to the current directory, so the
// session's workspace "." is that directory: the toolrunner resolves the
// link and confines every call (and the sandbox) to the real directory, and
// nothing is created beside the user's files.
//
// Against a `cairn up` at --server: the session's workspace is the absolute
// current directory, and the platform's gateway, which knows its workspace
// root, refuses it when it lies outside the tenant's root; the refusal is
// the answer, nothing runs elsewhere.
func newRunCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "run TEXT",
		Short: "run one prompt to completion in the current directory (on the gateway at --server, or an embedded platform if none answers)",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 || strings.TrimSpace(args[0]) == "" {
				return usagef(`run takes the prompt as one argument: cairn run "list the files"`)
			}
			return nil
		},
	}
	script := c.Flags().String("script", envOr("CAIRN_SCRIPT", ""), "script file of the scripted provider (env CAIRN_SCRIPT)")
	model := c.Flags().String("model", envOr("CAIRN_MODEL", "scripted/demo"), "model, provider/model (env CAIRN_MODEL)")
	c.RunE = func(cmd *cobra.Command, args []string) (err error) {
		ctx := cmd.Context()
		cwd, err := runDir()
		if err != nil {
			return err
		}
		cl, err := clientFrom(cmd)
		if err != nil {
			return err
		}
		server, _ := cmd.Flags().GetString("server")
		req := client.CreateSession{Model: *model, Workspace: cwd}
		if gatewayAnswers(ctx, cl) {
			fmt.Fprintf(e.stderr, "cairn run: platform at %s, workspace %s\n", server, cwd)
		} else {
			data, err := embeddedDataDir(cwd)
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, os.RemoveAll(data)) }()
			root := filepath.Join(data, "workspaces")
			if err := os.MkdirAll(root, 0o700); err != nil {
				return err
			}
			if err := os.Symlink(cwd, workspace.TenantRoot(root, events.DefaultTenant)); err != nil {
				return err
			}
			p, stop, err := startEmbedded(ctx, data, root, cwd, *script, *model, e.stderr)
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, stop()) }()
			if cl, err = client.New(p.URL, client.WithToken(p.AdminKey.Reveal())); err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "cairn run: embedded platform (nothing answers at %s), workspace %s\n", server, cwd)
			req.Workspace = "."
		}
		out, err := cl.CreateSession(ctx, req, client.WaitApplied())
		if ce := (*client.Error)(nil); errors.As(err, &ce) && (ce.Field == "workspace" || strings.Contains(ce.Message, "workspace")) {
			return fmt.Errorf("the current directory %s is not a workspace the platform at %s can use: %s; run it inside that platform's tenant workspace root, or without a server", cwd, server, ce.Message)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "session %s\n", out.SessionID)
		return promptAndFollow(ctx, cl, e.stdout, out.SessionID, args[0], "reject")
	}
	return c
}

// runDir returns the current directory, with its symlinks resolved, once it
// is known to be readable and not inside a Cairn data directory (its store,
// keys and credentials are no workspace; its workspaces/ are).
func runDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("the current directory: %w", err)
	}
	cwd, err := filepath.EvalSymlinks(wd)
	if err != nil {
		return "", fmt.Errorf("the current directory %s: %w", wd, err)
	}
	f, err := os.Open(cwd)
	if err == nil {
		_, err = f.ReadDir(1)
		if errors.Is(err, io.EOF) {
			err = nil
		}
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		return "", fmt.Errorf("the current directory %s cannot be read, so the agent could not work on it: %w", cwd, err)
	}
	for d := cwd; ; d = filepath.Dir(d) {
		if isDataDir(d) && !within(filepath.Join(d, "workspaces"), cwd) {
			return "", fmt.Errorf("the current directory %s is inside the Cairn data directory %s (its store, keys and credentials); run cairn run in a project directory", cwd, d)
		}
		if filepath.Dir(d) == d {
			return cwd, nil
		}
	}
}

// isDataDir reports whether d is a data directory of `cairn up`: it holds
// the admin key and the NATS credentials.
func isDataDir(d string) bool {
	k, err1 := os.Stat(adminKeyFile(d))
	c, err2 := os.Stat(filepath.Join(d, "credentials"))
	return err1 == nil && err2 == nil && k.Mode().IsRegular() && c.IsDir()
}

// within reports whether p is dir or inside it.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && (filepath.IsLocal(rel) || rel == ".")
}

// embeddedDataDir makes the embedded platform's temporary data directory
// outside cwd: in the temporary directory, else the user's cache directory.
func embeddedDataDir(cwd string) (string, error) {
	bases := []string{os.TempDir()}
	if c, err := os.UserCacheDir(); err == nil {
		bases = append(bases, c)
	}
	for _, b := range bases {
		if real, err := filepath.EvalSymlinks(b); err == nil && !within(cwd, real) {
			return os.MkdirTemp(real, "cairn-run-")
		}
	}
	return "", fmt.Errorf("no place for the embedded platform's data outside the current directory %s: set TMPDIR", cwd)
}

// gatewayAnswers reports whether a gateway answers /healthz quickly.
func gatewayAnswers(ctx context.Context, cl *client.Client) bool {
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	return cl.Health(ctx) == nil
}
