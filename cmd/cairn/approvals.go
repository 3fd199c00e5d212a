package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/spf13/cobra"
)

// The approvals commands (DESIGN §11, docs/approvals.md): list the
// tenant's requests, approve one (optionally with edited arguments), deny
// one with a reason.

func newApprovalsCmd(e *env) *cobra.Command {
	c := &cobra.Command{Use: "approvals", Short: "list approval requests of your tenant (pending first by default)", Args: cobra.NoArgs}
	status := c.Flags().String("status", "pending", "pending, approved, denied, expired, aborted, or all")
	sessionID := c.Flags().String("session", "", "only this session's")
	tool := c.Flags().String("tool", "", "only this tool's")
	limit := c.Flags().Int("limit", 100, "how many")
	watch := c.Flags().Bool("watch", false, "keep listing requests and answers as they come (Ctrl-C stops)")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		cl, err := clientFrom(cmd)
		if err != nil {
			return err
		}
		f := client.ApprovalFilter{Status: *status, Session: *sessionID, Tool: *tool, Limit: *limit}
		if f.Status == "all" {
			f.Status = ""
		}
		if *sessionID != "" {
			if err := sessionArg(*sessionID); err != nil {
				return err
			}
		}
		if !*watch {
			page, err := cl.Approvals(cmd.Context(), f)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SESSION\tCALL\tTOOL\tSTATUS\tREQUESTED\tEXPIRES\tANSWERED BY\tARGUMENTS")
			for _, a := range page.Approvals {
				writeApproval(tw, a)
			}
			return tw.Flush()
		}
		// --watch: every request and answer once, as the read model gets it.
		f.Status = ""
		seen := map[string]string{}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SESSION\tCALL\tTOOL\tSTATUS\tREQUESTED\tEXPIRES\tANSWERED BY\tARGUMENTS")
		if err := tw.Flush(); err != nil {
			return err
		}
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			for cursor := ""; ; {
				f.Cursor = cursor
				page, err := cl.Approvals(cmd.Context(), f)
				if err != nil {
					return err
				}
				for _, a := range page.Approvals {
					if seen[a.Session+"/"+a.EntryID] == a.Status {
						continue
					}
					seen[a.Session+"/"+a.EntryID] = a.Status
					if *status == "all" || *status == "pending" || a.Status == *status || a.Status != client.ApprovalPending {
						writeApproval(tw, a)
					}
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				if cursor = page.NextCursor; cursor == "" {
					break
				}
			}
			select {
			case <-cmd.Context().Done():
				return nil
			case <-tick.C:
			}
		}
	}
	return c
}

func writeApproval(w io.Writer, a client.Approval) {
	args := string(a.Arguments)
	if len(a.EditedArguments) > 0 {
		args = string(a.EditedArguments) + " (edited)"
	}
	if len(args) > 80 {
		args = args[:77] + "..."
	}
	by := a.AnsweredBy
	if a.Status != client.ApprovalPending && by == "" {
		by = "-"
	}
	fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.Session, a.ToolCallID, a.Tool, a.Status, a.RequestedAt, a.ExpiresAt, by, args)
}

func newApproveCmd(e *env) *cobra.Command {
	c := &cobra.Command{Use: "approve ID CALL", Short: "let a tool call that waits for approval run", Args: cobra.ExactArgs(2)}
	args := c.Flags().String("args", "", "run it with these arguments instead (a JSON object, checked against the tool's schema)")
	c.RunE = func(cmd *cobra.Command, a []string) error {
		cl, err := sessionClient(cmd, a[0])
		if err != nil {
			return err
		}
		var edited json.RawMessage
		if *args != "" {
			if !json.Valid([]byte(*args)) || !strings.HasPrefix(strings.TrimSpace(*args), "{") {
				return usagef("--args: must be a JSON object, got %q", *args)
			}
			edited = json.RawMessage(*args)
		}
		if err := events.ValidateToolCallID("CALL", a[1]); err != nil {
			return usagef("%v", err)
		}
		out, err := cl.Send(cmd.Context(), a[0], client.Approve(a[1], edited), client.WaitApplied())
		if err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, out.CommandID)
		return nil
	}
	return c
}

func newDenyCmd(e *env) *cobra.Command {
	c := &cobra.Command{Use: "deny ID CALL --reason TEXT", Short: "refuse a tool call that waits for approval", Args: cobra.ExactArgs(2)}
	reason := c.Flags().String("reason", "", "why (required; the model sees it)")
	c.RunE = func(cmd *cobra.Command, a []string) error {
		if strings.TrimSpace(*reason) == "" {
			return usagef("--reason is required: say why the call is denied")
		}
		cl, err := sessionClient(cmd, a[0])
		if err != nil {
			return err
		}
		if err := events.ValidateToolCallID("CALL", a[1]); err != nil {
			return usagef("%v", err)
		}
		out, err := cl.Send(cmd.Context(), a[0], client.Deny(a[1], *reason), client.WaitApplied())
		if err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, out.CommandID)
		return nil
	}
	return c
}
