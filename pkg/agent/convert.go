package agent

import (
	"github.com/cairn-agents/cairn/pkg/events"
)

// ToLLM is the one conversion of a context (what the reducer of package
// sessiontree builds, what `/context` shows) into the messages a provider
// takes (user, assistant, toolResult), pi's convertToLlm:
//   - assistant messages that ended in error or aborted are left out (they
//     are on record but carry nothing a model should continue from);
//   - compaction and branch summaries become user messages that say what
//     they are;
//   - custom messages become user messages with their content;
//   - user bash executions become user messages, except those marked
//     excludeFromContext (pi's !! prefix), which are left out here and
//     nowhere else: the context keeps them, as pi's does;
//   - anything else is left out.
//
// It returns msgs itself when nothing needs changing.
func ToLLM(msgs []events.Message) []events.Message {
	clean := true
	for i := range msgs {
		if !plain(&msgs[i]) {
			clean = false
			break
		}
	}
	if clean {
		return msgs
	}
	out := make([]events.Message, 0, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		if plain(m) {
			out = append(out, *m)
			continue
		}
		switch m.Role {
		case events.RoleCompactionSummary:
			out = append(out, userText(m, "The conversation history before this point was compacted into the following summary:\n<summary>\n"+m.Summary+"\n</summary>"))
		case events.RoleBranchSummary:
			out = append(out, userText(m, "The following is a summary of a branch that this conversation came back from:\n<summary>\n"+m.Summary+"\n</summary>"))
		case events.RoleCustom:
			out = append(out, events.Message{Role: events.RoleUser, Content: m.Content, Timestamp: m.Timestamp})
		case events.RoleBashExecution:
			if !m.ExcludeFromContext {
				out = append(out, userText(m, "Ran `"+m.Command+"`\n```\n"+m.Output+"\n```"))
			}
		}
	}
	return out
}

func plain(m *events.Message) bool {
	switch m.Role {
	case events.RoleUser, events.RoleToolResult:
		return true
	case events.RoleAssistant:
		return m.StopReason != events.StopError && m.StopReason != events.StopAborted
	}
	return false
}

func userText(m *events.Message, s string) events.Message {
	return events.Message{Role: events.RoleUser, Content: events.TextContent(s), Timestamp: m.Timestamp}
}
