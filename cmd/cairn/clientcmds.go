package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/spf13/cobra"
)

// clientFrom returns the SDK client of the gateway --server names, with
// the token of --token, CAIRN_TOKEN or the key `cairn up` recorded for
// that server (serverkeys.go), acting for --tenant when given (the
// Cairn-Tenant header: a platform admin's requests for another tenant).
func clientFrom(cmd *cobra.Command) (*client.Client, error) {
	server, _ := cmd.Flags().GetString("server")
	flag, _ := cmd.Flags().GetString("token")
	// The root's --tenant: `keys create|list` have a --tenant of their own
	// (the key's), which shadows it there.
	tenant, _ := cmd.Root().PersistentFlags().GetString("tenant")
	if tenant != "" {
		if err := events.ValidateTenant(tenant); err != nil {
			return nil, usagef("--tenant: %v", err)
		}
	}
	if _, err := client.New(server); err != nil {
		return nil, usagef("--server: %q is not an http(s) URL", server)
	}
	token, err := tokenFor(server, flag)
	if err != nil {
		return nil, err
	}
	opts := []client.Option{client.WithToken(token.Reveal())}
	if tenant != "" {
		opts = append(opts, client.WithTenant(tenant))
	}
	cl, err := client.New(server, opts...)
	if err != nil {
		return nil, usagef("--token: %v", err)
	}
	return cl, nil
}

// sessionClient is clientFrom for a command of the session id: it also
// checks id, the --server flag first.
func sessionClient(cmd *cobra.Command, id string) (*client.Client, error) {
	cl, err := clientFrom(cmd)
	if err != nil {
		return nil, err
	}
	if err := sessionArg(id); err != nil {
		return nil, err
	}
	return cl, nil
}

func newSessionCmd(e *env) *cobra.Command {
	c := &cobra.Command{Use: "session", Short: "manage sessions"}
	nw := &cobra.Command{Use: "new", Short: "create a session and print its id", Args: cobra.NoArgs}
	id := nw.Flags().String("id", "", "session id (default: generated)")
	model := nw.Flags().String("model", "", "model, provider/model (default: the orchestrator's)")
	workspace := nw.Flags().String("workspace", "", "workspace: a path inside the workspace root, absolute or relative to it (default: <root>/<session id>)")
	tools := nw.Flags().StringSlice("tools", nil, "tools the agent may use (default: every registered tool)")
	system := nw.Flags().String("system-prompt", "", "system prompt")
	ask := nw.Flags().StringSlice("ask", nil, "tools whose calls wait for approval (* = every tool); see cairn approvals")
	nw.RunE = func(cmd *cobra.Command, _ []string) error {
		cl, err := clientFrom(cmd)
		if err != nil {
			return err
		}
		req := client.CreateSession{ID: *id, Model: *model, Workspace: *workspace, SystemPrompt: *system}
		if len(*ask) > 0 {
			req.Approvals = &events.Approvals{Tools: map[string]string{}}
			for _, t := range *ask {
				req.Approvals.Tools[t] = events.PolicyAsk
			}
			if err := req.Approvals.Validate("--ask"); err != nil {
				return usagef("%v", err)
			}
		}
		if cmd.Flags().Changed("tools") {
			req.Tools = *tools
			if req.Tools == nil {
				req.Tools = []string{}
			}
		}
		out, err := cl.CreateSession(cmd.Context(), req, client.WaitApplied())
		if err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, out.SessionID)
		return nil
	}
	c.AddCommand(nw)
	return c
}

// sendCmd posts a command of a session and prints its id.
func sendCmd(e *env, use, short, typ string, withText bool) *cobra.Command {
	nargs := 1
	if withText {
		nargs = 2
	}
	return &cobra.Command{
		Use: use, Short: short, Args: cobra.ExactArgs(nargs),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := sessionClient(cmd, args[0])
			if err != nil {
				return err
			}
			c := client.Command{Type: typ}
			if withText {
				c.Text = args[1]
			}
			out, err := cl.Send(cmd.Context(), args[0], c, client.WaitApplied())
			if err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, out.CommandID)
			return nil
		},
	}
}

func newPromptCmd(e *env) *cobra.Command {
	c := &cobra.Command{Use: "prompt ID TEXT", Short: "send a prompt and follow the live output until the agent settles", Args: cobra.ExactArgs(2)}
	whenBusy := c.Flags().String("when-busy", "reject", "if the agent is running: reject, steer, follow_up or interrupt")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		cl, err := sessionClient(cmd, args[0])
		if err != nil {
			return err
		}
		return promptAndFollow(cmd.Context(), cl, e.stdout, args[0], args[1], *whenBusy)
	}
	return c
}

func newSessionsCmd(e *env) *cobra.Command {
	c := &cobra.Command{Use: "sessions", Short: "list sessions, newest activity first", Args: cobra.NoArgs}
	limit := c.Flags().Int("limit", 50, "how many")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		cl, err := clientFrom(cmd)
		if err != nil {
			return err
		}
		page, err := cl.ListSessions(cmd.Context(), client.ListSessions{Limit: *limit})
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATUS\tMODEL\tMESSAGES\tCOST\tLAST ACTIVITY")
		for _, s := range page.Sessions {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t$%.4f\t%s\n", s.ID, s.Status, s.Model, s.Messages, s.Cost, s.LastActivity)
		}
		return tw.Flush()
	}
	return c
}

func newContextCmd(e *env) *cobra.Command {
	c := &cobra.Command{Use: "context ID", Short: "print the context the model would see (JSON)", Args: cobra.ExactArgs(1)}
	leaf := c.Flags().String("leaf", "", "build it for this entry instead of the active leaf")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		cl, err := sessionClient(cmd, args[0])
		if err != nil {
			return err
		}
		out, err := cl.Context(cmd.Context(), args[0], *leaf)
		if err != nil {
			return err
		}
		data, err := json.Marshal(out)
		if err != nil {
			return err
		}
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, data, "", "  "); err != nil {
			return fmt.Errorf("the gateway's answer is not JSON: %w", err)
		}
		pretty.WriteByte('\n')
		_, err = e.stdout.Write(pretty.Bytes())
		return err
	}
	return c
}
