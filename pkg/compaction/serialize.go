package compaction

import (
	"fmt"
	"strings"

	"github.com/cairn-agents/cairn/pkg/events"
)

// ToolResultChars is how much of a tool result (or a shell command's
// output) the summariser sees; the rest is cut with a note saying how much.
const ToolResultChars = 2000

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s\n[... %d more characters truncated]", s[:cut], len(s)-cut)
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// Serialize renders messages as the plain-text transcript the summariser
// reads: one labelled paragraph per part, tool results truncated.
func Serialize(msgs []events.Message) string {
	var sb strings.Builder
	para := func(label, text string) {
		if strings.TrimSpace(text) == "" {
			return
		}
		if sb.Len() > 0 {
			sb.WriteString("\n\n")
		}
		sb.WriteString("[" + label + "]: " + text)
	}
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case events.RoleUser:
			para("User", contentText(m.Content))
		case events.RoleAssistant:
			var calls []string
			for _, b := range m.Content.Blocks {
				switch b.Type {
				case events.BlockThinking:
					para("Assistant thinking", b.Thinking)
				case events.BlockText:
					para("Assistant", b.Text)
				case events.BlockToolCall:
					calls = append(calls, b.Name+"("+string(b.Arguments)+")")
				}
			}
			para("Assistant tool calls", strings.Join(calls, "; "))
			if m.StopReason == events.StopError && m.ErrorMessage != "" {
				para("Assistant error", m.ErrorMessage)
			}
		case events.RoleToolResult:
			label := "Tool result " + m.ToolName
			if m.IsError {
				label += " (error)"
			}
			para(label, truncate(contentText(m.Content), ToolResultChars))
		case events.RoleCustom:
			para("Note "+m.CustomType, contentText(m.Content))
		case events.RoleBranchSummary:
			para("Summary of an abandoned branch", m.Summary)
		case events.RoleCompactionSummary:
			para("Summary of earlier history", m.Summary)
		case events.RoleBashExecution:
			// One the user kept out of the model's context (pi's !!) is
			// kept out of the summariser's too: pi serialises what
			// convertToLlm gives.
			if !m.ExcludeFromContext {
				para("User ran", m.Command+"\n"+truncate(m.Output, ToolResultChars))
			}
		}
	}
	return sb.String()
}

func contentText(c events.Content) string {
	var sb strings.Builder
	for _, b := range c.Blocks {
		switch b.Type {
		case events.BlockText:
			if sb.Len() > 0 {
				sb.WriteString("\n")
			}
			sb.WriteString(b.Text)
		case events.BlockImage:
			if sb.Len() > 0 {
				sb.WriteString("\n")
			}
			sb.WriteString("[image]")
		}
	}
	return sb.String()
}
