package compaction

import (
	"errors"

	"github.com/cairn-agents/cairn/pkg/events"
)

// ErrNothingToCompact says a compaction would summarise nothing new: the
// context is within the keep-recent budget, or everything before the cut
// is already summarised.
var ErrNothingToCompact = errors.New("nothing to compact")

// Preparation is what a compaction of a path does.
type Preparation struct {
	// FirstKeptEntryID is the first entry kept verbatim.
	FirstKeptEntryID string
	// Summarize are the messages the summary replaces (up to the turn the
	// cut splits, if it splits one).
	Summarize []events.Message
	// TurnPrefix are the messages of a split turn before the cut,
	// summarised separately; empty when the cut is at a turn's start.
	TurnPrefix []events.Message
	// PreviousSummary is the summary of the last compaction on the path.
	PreviousSummary string
	// TokensBefore estimates the context before the compaction.
	TokensBefore int64
	// Files are the file operations of everything summarised so far.
	Files FileOps
}

// SplitTurn reports whether the cut falls inside a turn.
func (p *Preparation) SplitTurn() bool { return len(p.TurnPrefix) > 0 }

// Prepare decides what compacting path (root to leaf) keeps and
// summarises; see the package doc for the rules.
func Prepare(path []events.Entry, s Settings) (Preparation, error) {
	if err := s.Validate(); err != nil {
		return Preparation{}, err
	}
	p := Preparation{Files: newFileOps()}

	// The context: after the last compaction, the entries it kept (from its
	// FirstKeptEntryID up to it) and those after it.
	prev := -1
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Type == events.EntryCompaction {
			prev = i
			break
		}
	}
	var ctx []int // indexes into path
	var msgs []events.Message
	if prev >= 0 {
		msgs = make([]events.Message, 0, len(path)-prev+1)
		c := &path[prev]
		p.PreviousSummary = c.Summary
		p.Files.mergeDetails(c.Details)
		msgs = append(msgs, events.Message{Role: events.RoleCompactionSummary, Summary: c.Summary, TokensBefore: c.TokensBefore})
		for i := 0; i < prev; i++ {
			if path[i].ID == c.FirstKeptEntryID {
				for j := i; j < prev; j++ {
					ctx = append(ctx, j)
				}
				break
			}
		}
	}
	for i := prev + 1; i < len(path); i++ {
		if path[i].Type != events.EntrySession {
			ctx = append(ctx, i)
		}
	}
	if msgs == nil {
		msgs = make([]events.Message, 0, len(ctx))
	}
	for _, i := range ctx {
		if m, ok := entryMessage(&path[i]); ok {
			msgs = append(msgs, m)
		}
	}
	p.TokensBefore = EstimateContext(msgs).Tokens

	cut := cutPoint(path, ctx, s.KeepRecentTokens)
	if cut <= 0 {
		return p, ErrNothingToCompact
	}
	// Keep the settings changes and other non-message entries right before
	// the cut with what they apply to.
	for cut > 0 {
		e := &path[ctx[cut-1]]
		if _, ok := entryMessage(e); ok || e.Type == events.EntryCompaction {
			break
		}
		cut--
	}
	if cut == 0 {
		return p, ErrNothingToCompact
	}
	p.FirstKeptEntryID = path[ctx[cut]].ID

	end := cut   // the history part ends here, or at the split turn's start
	first := cut // the first message kept
	for first < len(ctx)-1 && !isMessage(&path[ctx[first]]) {
		first++
	}
	if !startsTurn(&path[ctx[first]]) {
		for t := cut - 1; t >= 0; t-- {
			if startsTurn(&path[ctx[t]]) {
				end = t
				break
			}
		}
	}
	p.Summarize = make([]events.Message, 0, end)
	for k, i := range ctx[:cut] {
		m, ok := entryMessage(&path[i])
		if !ok {
			continue
		}
		p.Files.note(&m)
		if k < end {
			p.Summarize = append(p.Summarize, m)
		} else {
			p.TurnPrefix = append(p.TurnPrefix, m)
		}
	}
	if len(p.Summarize) == 0 && len(p.TurnPrefix) == 0 {
		return p, ErrNothingToCompact
	}
	return p, nil
}

// cutPoint returns the position in ctx of the first entry kept: walking
// back from the newest message until keep tokens are reached, then forward
// to the nearest entry a cut may start at. It returns 0 (keep everything)
// when the whole context is within the budget, and len(ctx) never: the
// newest cut-allowed entry is kept at least.
func cutPoint(path []events.Entry, ctx []int, keep int64) int {
	var acc int64
	start := -1
	for k := len(ctx) - 1; k >= 0; k-- {
		m, ok := entryMessage(&path[ctx[k]])
		if !ok {
			continue
		}
		acc += EstimateMessage(&m)
		if acc >= keep {
			start = k
			break
		}
	}
	if start <= 0 {
		return 0
	}
	for k := start; k < len(ctx); k++ {
		if cutAllowed(&path[ctx[k]]) {
			return k
		}
	}
	// Only tool results after the budget point: cut at the last entry
	// before it that may start the kept part.
	for k := start - 1; k > 0; k-- {
		if cutAllowed(&path[ctx[k]]) {
			return k
		}
	}
	return 0
}
