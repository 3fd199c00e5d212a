package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cairn-agents/cairn/pkg/events"
)

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
	case events.EvApprovalRequested:
		if r.started && ev.Approval != nil {
			r.endLine()
			r.print(fmt.Sprintf("⏸ %s %s waits for approval: cairn approve %s %s (or cairn deny %s %s --reason ...)\n",
				ev.Approval.ToolName, ev.Approval.Arguments, ev.SessionID, ev.Approval.ToolCallID, ev.SessionID, ev.Approval.ToolCallID))
		}
	case events.EvApprovalAnswered:
		if r.started && ev.Approval != nil {
			r.print(fmt.Sprintf("▶ %s %s by %s\n", ev.Approval.ToolCallID, ev.Approval.Decision, ev.Approval.Principal))
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
