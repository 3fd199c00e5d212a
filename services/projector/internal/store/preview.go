package store

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/cairn-agents/cairn/pkg/events"
)

// PreviewRunes is the most characters (runes) of text a tree node's preview
// holds; a longer first line is cut there and ends with "…".
const PreviewRunes = 80

// preview fills n's Preview and Tools from entry e, so that a tree can be
// drawn from one request. The rule for each entry type is in
// docs/read-models.md ("Tree"); keep the two in step.
func preview(n *Node, e *events.Entry) {
	switch e.Type {
	case events.EntryMessage:
		if e.Message != nil {
			messagePreview(n, e.Message)
		}
	case events.EntryCompaction, events.EntryBranchSummary:
		n.Preview = firstLine(e.Summary)
	case events.EntryModelChange:
		n.Preview = e.Provider + "/" + e.ModelID
	case events.EntryThinkingLevelChange:
		n.Preview = e.ThinkingLevel
	case events.EntryActiveToolsChange:
		n.Tools = cloneStrings(e.ActiveToolNames)
	case events.EntryLabel:
		n.Preview = firstLine(e.Label)
	case events.EntryLeaf:
		if e.TargetID == nil {
			n.Preview = "→ (before the first entry)"
		} else {
			n.Preview = "→ " + *e.TargetID
		}
	case events.EntrySessionInfo:
		n.Preview = firstLine(e.Name)
	case events.EntryCustom:
		n.Preview = firstLine(e.CustomType)
	case events.EntryCustomMessage:
		if n.Preview = firstLine(e.Content.Text()); n.Preview == "" {
			n.Preview = firstLine(e.CustomType)
		}
	case events.EntryTurnInterrupted, events.EntryCommandRejected:
		n.Preview = firstLine(e.Reason)
	}
}

func messagePreview(n *Node, m *events.Message) {
	text := m.Content.Text()
	switch m.Role {
	case events.RoleAssistant:
		for _, c := range m.ToolCalls() {
			n.Tools = append(n.Tools, c.Name)
		}
		if strings.TrimSpace(text) == "" {
			text = m.ErrorMessage
		}
	case events.RoleToolResult:
		n.Tools = []string{m.ToolName}
	case events.RoleBranchSummary, events.RoleCompactionSummary:
		if strings.TrimSpace(text) == "" {
			text = m.Summary
		}
	case events.RoleBashExecution:
		if strings.TrimSpace(text) == "" {
			text = "$ " + m.Command
		}
	}
	if n.Preview = firstLine(text); n.Preview == "" {
		if k := images(m.Content); k > 0 {
			n.Preview = fmt.Sprintf("[%d image(s)]", k)
		}
	}
}

func images(c events.Content) int {
	k := 0
	for _, b := range c.Blocks {
		if b.Type == events.BlockImage {
			k++
		}
	}
	return k
}

// firstLine returns the first line of s that is not blank, trimmed and cut
// to PreviewRunes runes ("…" marks a cut, within the line or after it).
// Control characters become spaces.
func firstLine(s string) string {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	line, rest, _ := strings.Cut(s, "\n")
	line = strings.TrimRightFunc(line, unicode.IsSpace)
	more := strings.TrimSpace(rest) != ""
	var b strings.Builder
	n := 0
	for _, r := range line {
		if n == PreviewRunes {
			more = true
			break
		}
		if unicode.IsControl(r) {
			r = ' '
		}
		b.WriteRune(r)
		n++
	}
	if more && b.Len() > 0 {
		b.WriteString("…")
	}
	return b.String()
}

func cloneStrings(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return append([]string(nil), s...)
}
