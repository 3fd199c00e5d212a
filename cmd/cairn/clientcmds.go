package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
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
	workspace := nw.Flags().String("workspace", "", "workspace: a path inside the workspace root, absolute or relative to it (default: <root>/<session id>)")
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

// renderer prints one run's events.
type renderer struct {
	w        io.Writer
	spin     bool
	started  bool
	midLine  bool
	thinking bool
	spun     int

	// What was shown of the assistant message being streamed (or the last
	// one), so that a run settled from the log prints only what is missing.
	text  strings.Builder
	ended bool // its message_end was shown
}

const (
	dim   = "\x1b[2m"
	reset = "\x1b[0m"
)

func (r *renderer) spinner() {
	if !r.spin || r.midLine {
		return
	}
	frames := `|/-\`
	fmt.Fprintf(r.w, "\r%c", frames[r.spun%len(frames)])
	r.spun++
}

func (r *renderer) clearSpinner() {
	if r.spin && r.spun > 0 && !r.midLine {
		fmt.Fprint(r.w, "\r \r")
	}
}

func (r *renderer) print(s string) {
	r.clearSpinner()
	r.spun = 0
	fmt.Fprint(r.w, s)
}

func (r *renderer) endLine() {
	if r.midLine {
		if r.thinking && r.spin {
			fmt.Fprint(r.w, reset)
		}
		fmt.Fprintln(r.w)
		r.midLine, r.thinking = false, false
	}
}

// event renders ev; done once the run this prompt started has ended.
func (r *renderer) event(ev events.Event, commandID string) (done bool, err error) {
	switch ev.Type {
	case events.EvCommandRejected:
		if ev.CommandID == commandID {
			return true, fmt.Errorf("prompt refused: %s", ev.Error)
		}
	case events.EvAgentStart:
		r.started = true
	case events.EvMessageUpdate:
		if !r.started || ev.Delta == nil {
			return false, nil
		}
		switch ev.Delta.Kind {
		case events.DeltaThinking:
			if !r.thinking {
				r.endLine()
				if r.spin {
					r.print(dim)
				}
				r.print("thinking: ")
				r.thinking = true
			}
			r.print(ev.Delta.Delta)
			r.midLine = true
		case events.DeltaText:
			if r.thinking {
				r.endLine()
			}
			if r.ended {
				r.text.Reset()
				r.ended = false
			}
			r.print(ev.Delta.Delta)
			r.text.WriteString(ev.Delta.Delta)
			r.midLine = true
		}
	case events.EvMessageStart:
		if ev.Message != nil && ev.Message.Role == events.RoleAssistant {
			r.text.Reset()
			r.ended = false
		}
	case events.EvMessageEnd:
		if r.started && ev.Message != nil && ev.Message.Role == events.RoleAssistant {
			r.ended = true
			r.endLine()
			if ev.Message.StopReason == events.StopError {
				r.print(fmt.Sprintf("[error: %s]\n", ev.Message.ErrorMessage))
			}
			if ev.Message.StopReason == events.StopAborted {
				r.print("[aborted]\n")
			}
		}
	case events.EvToolExecutionStart:
		r.text.Reset()
		r.ended = false
		if r.started {
			r.endLine()
			r.print(fmt.Sprintf("→ %s %s\n", ev.ToolName, ev.Args))
		}
	case events.EvToolExecutionEnd:
		if r.started && ev.Result != nil {
			status := "ok"
			if ev.IsError {
				status = "error"
			}
			r.print(fmt.Sprintf("← %s %s: %s\n", ev.ToolName, status, firstLine(ev.Result.Content.Text(), 100)))
		}
	case events.EvAgentEnd:
		if r.started {
			r.endLine()
			return true, nil
		}
	}
	return false, nil
}

// settle ends a run the log says has settled, when its agent_end did not
// arrive: it prints what of final (the message that ended the run, nil if a
// crash interrupted it) the events did not show.
func (r *renderer) settle(final *events.Message, interrupted bool) {
	r.clearSpinner()
	if final != nil && final.Role == events.RoleAssistant {
		text := final.Content.Text()
		shown := r.text.String()
		switch {
		case r.ended && shown == text:
		case !r.ended && strings.HasPrefix(text, shown):
			r.print(text[len(shown):])
			r.midLine = r.midLine || len(text) > len(shown)
		default:
			r.endLine()
			r.print(text)
			r.midLine = text != ""
		}
		r.endLine()
		if !r.ended {
			switch final.StopReason {
			case events.StopError:
				r.print(fmt.Sprintf("[error: %s]\n", final.ErrorMessage))
			case events.StopAborted:
				r.print("[aborted]\n")
			}
		}
		r.ended = true
	}
	r.endLine()
	if interrupted {
		r.print("[interrupted: the run was cut short and closed by recovery]\n")
	}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
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
