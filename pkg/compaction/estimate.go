package compaction

import "github.com/cairn-agents/cairn/pkg/events"

// ImageTokens is what one image counts for in an estimate: a fixed,
// sizeable amount (what a mid-sized image costs on the major providers).
const ImageTokens = 1200

// EstimateMessage estimates the tokens of m: its characters / 4, rounded
// up, each image counting ImageTokens.
func EstimateMessage(m *events.Message) int64 {
	chars, images := 0, 0
	for i := range m.Content.Blocks {
		b := &m.Content.Blocks[i]
		switch b.Type {
		case events.BlockImage:
			images++
		case events.BlockToolCall:
			chars += len(b.Name) + len(b.Arguments)
		default:
			chars += len(b.Text) + len(b.Thinking)
		}
	}
	chars += len(m.Summary) + len(m.Command) + len(m.Output)
	return int64((chars+3)/4) + int64(images)*ImageTokens
}

// ContextTokens is the size of the context a reply with usage u was made
// from, plus the reply: TotalTokens, or the sum of the parts when the
// provider gave no total.
func ContextTokens(u *events.Usage) int64 {
	if u.TotalTokens > 0 {
		return u.TotalTokens
	}
	return u.Input + u.Output + u.CacheRead + u.CacheWrite
}

// validUsage returns the usage of m when it is an assistant reply whose
// usage says something: not an error, not aborted, not all zero.
func validUsage(m *events.Message) (*events.Usage, bool) {
	if m.Role != events.RoleAssistant || m.Usage == nil {
		return nil, false
	}
	if m.StopReason == events.StopError || m.StopReason == events.StopAborted {
		return nil, false
	}
	if ContextTokens(m.Usage) == 0 {
		return nil, false
	}
	return m.Usage, true
}

// Estimate is the estimated size of a context.
type Estimate struct {
	Tokens int64 // UsageTokens + TrailingTokens
	// UsageTokens is the context tokens of the last valid usage; 0 if none.
	UsageTokens int64
	// TrailingTokens is the estimate of the messages after it (all of them
	// when there is no valid usage).
	TrailingTokens int64
	// LastUsageIndex is the index of the message whose usage counted; -1 if
	// none did.
	LastUsageIndex int
}

// EstimateContext estimates the tokens of msgs: the last valid assistant
// usage plus an estimate of the messages after it.
func EstimateContext(msgs []events.Message) Estimate {
	e := Estimate{LastUsageIndex: -1}
	for i := len(msgs) - 1; i >= 0; i-- {
		if u, ok := validUsage(&msgs[i]); ok {
			e.UsageTokens, e.LastUsageIndex = ContextTokens(u), i
			break
		}
	}
	for i := e.LastUsageIndex + 1; i < len(msgs); i++ {
		e.TrailingTokens += EstimateMessage(&msgs[i])
	}
	e.Tokens = e.UsageTokens + e.TrailingTokens
	return e
}

// ShouldCompact reports whether a context of tokens leaves less than the
// reserve free in window: tokens > window − reserve, strictly. A window ≤ 0
// (unknown) never triggers.
func ShouldCompact(tokens, window int64, s Settings) bool {
	if window <= 0 {
		return false
	}
	return tokens > window-s.ReserveTokens
}
