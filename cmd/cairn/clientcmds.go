package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/spf13/cobra"
)

func clientFrom(cmd *cobra.Command) (*client, error) {
	server, _ := cmd.Flags().GetString("server")
	return newClient(server)
}

func newSessionCmd(e *env) *cobra.Command {
	c := &cobra.Command{Use: "session", Short: "manage sessions"}
	nw := &cobra.Command{Use: "new", Short: "create a session and print its id", Args: cobra.NoArgs}
	id := nw.Flags().String("id", "", "session id (default: generated)")
	model := nw.Flags().String("model", "", "model, provider/model (default: the orchestrator's)")
	workspace := nw.Flags().String("workspace", "", "workspace, relative to the workspace root (default: the session id)")
	tools := nw.Flags().StringSlice("tools", nil, "tools the agent may use (default: every registered tool)")
	system := nw.Flags().String("system-prompt", "", "system prompt")
	nw.RunE = func(cmd *cobra.Command, _ []string) error {
		cl, err := clientFrom(cmd)
		if err != nil {
			return err
		}
		body := map[string]any{}
		for k, v := range map[string]string{"id": *id, "model": *model, "workspace": *workspace, "systemPrompt": *system} {
			if v != "" {
				body[k] = v
			}
		}
		if cmd.Flags().Changed("tools") {
			body["tools"] = *tools
		}
		var out struct{ ID string }
		if err := cl.do(cmd.Context(), "POST", "/v1/sessions?wait=applied", body, &out); err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, out.ID)
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
			cl, err := clientFrom(cmd)
			if err != nil {
				return err
			}
			body := map[string]any{"type": typ}
			if withText {
				body["text"] = args[1]
			}
			var out struct{ CommandID string }
			if err := cl.do(cmd.Context(), "POST", "/v1/sessions/"+url.PathEscape(args[0])+"/commands?wait=applied", body, &out); err != nil {
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
		cl, err := clientFrom(cmd)
		if err != nil {
			return err
		}
		return promptAndFollow(cmd.Context(), cl, e.stdout, args[0], args[1], *whenBusy)
	}
	return c
}

// promptAndFollow sends a prompt and prints the agent's output until it settles.
func promptAndFollow(ctx context.Context, cl *client, w io.Writer, sid, text, whenBusy string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := cl.sessionEvents(ctx, sid)
	if err != nil {
		return err
	}
	defer stream.close()
	id := events.NewID()
	body := map[string]any{"id": id, "type": "prompt", "text": text, "whenBusy": whenBusy}
	if err := cl.do(ctx, "POST", "/v1/sessions/"+url.PathEscape(sid)+"/commands", body, nil); err != nil {
		return err
	}
	started, midLine := false, false
	for {
		ev, err := stream.next()
		if err != nil {
			return fmt.Errorf("lost the event stream: %w", err)
		}
		switch ev.Type {
		case events.EvCommandRejected:
			if ev.CommandID == id {
				return fmt.Errorf("prompt refused: %s", ev.Error)
			}
		case events.EvAgentStart:
			started = true
		case events.EvMessageUpdate:
			if started && ev.Delta != nil && ev.Delta.Kind == events.DeltaText {
				fmt.Fprint(w, ev.Delta.Delta)
				midLine = true
			}
		case events.EvMessageEnd:
			if started && ev.Message != nil && ev.Message.Role == events.RoleAssistant {
				if midLine {
					fmt.Fprintln(w)
					midLine = false
				}
				if ev.Message.StopReason == events.StopError {
					fmt.Fprintf(w, "[error: %s]\n", ev.Message.ErrorMessage)
				}
			}
		case events.EvToolExecutionStart:
			if started {
				fmt.Fprintf(w, "→ %s %s\n", ev.ToolName, ev.Args)
			}
		case events.EvToolExecutionEnd:
			if started && ev.Result != nil {
				status := "ok"
				if ev.IsError {
					status = "error"
				}
				fmt.Fprintf(w, "← %s %s: %s\n", ev.ToolName, status, firstLine(ev.Result.Content.Text(), 100))
			}
		case events.EvAgentEnd:
			if started {
				return nil
			}
		}
	}
}

func firstLine(s string, max int) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

func newSessionsCmd(e *env) *cobra.Command {
	c := &cobra.Command{Use: "sessions", Short: "list sessions, newest activity first", Args: cobra.NoArgs}
	limit := c.Flags().Int("limit", 50, "how many")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		cl, err := clientFrom(cmd)
		if err != nil {
			return err
		}
		var out struct {
			Sessions []struct {
				ID, Status, Model, LastActivity string
				Messages                        int
				Cost                            float64
			}
			Next string
		}
		if err := cl.do(cmd.Context(), "GET", fmt.Sprintf("/v1/sessions?limit=%d", *limit), nil, &out); err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATUS\tMODEL\tMESSAGES\tCOST\tLAST ACTIVITY")
		for _, s := range out.Sessions {
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
		cl, err := clientFrom(cmd)
		if err != nil {
			return err
		}
		path := "/v1/sessions/" + url.PathEscape(args[0]) + "/context"
		if *leaf != "" {
			path += "?leaf=" + url.QueryEscape(*leaf)
		}
		var out json.RawMessage
		if err := cl.do(cmd.Context(), "GET", path, nil, &out); err != nil {
			return err
		}
		var pretty bytes.Buffer
		json.Indent(&pretty, out, "", "  ")
		pretty.WriteByte('\n')
		_, err = e.stdout.Write(pretty.Bytes())
		return err
	}
	return c
}
