package compaction

import (
	"errors"
	"fmt"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/sessiontree"
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
// summarises; see the package doc for the rules. The context it cuts is
// the one the model is sent (sessiontree.BuildParts); a path the reducer
// refuses is its *sessiontree.ContextError.
func Prepare(path []events.Entry, s Settings) (Preparation, error) {
	if err := s.Validate(); err != nil {
		return Preparation{}, err
	}
	p := Preparation{Files: newFileOps()}

	// The context: after the last compaction (its summary, the first part),
	// the entries it kept (from its FirstKeptEntryID up to it) and those
	// after it.
	c, parts, err := sessiontree.BuildParts(nil, path)
	if err != nil {
		return p, fmt.Errorf("compaction: %w", err)
	}
	if c.CompactionID != "" {
		prev := &path[parts[0].Index]
		p.PreviousSummary = prev.Summary
		p.Files.mergeDetails(prev.Details)
		parts = parts[1:]
	}
	p.TokensBefore = EstimateContext(c.Messages).Tokens

	cut := cutPoint(parts, s.KeepRecentTokens)
	if cut <= 0 {
		return p, ErrNothingToCompact
	}
	// Keep the settings changes and other non-message entries right before
	// the cut with what they apply to.
	for cut > 0 {
		e := &path[parts[cut-1].Index]
		if isMessage(&parts[cut-1]) || e.Type == events.EntryCompaction {
			break
		}
		cut--
	}
	if cut == 0 {
		return p, ErrNothingToCompact
	}
	p.FirstKeptEntryID = path[parts[cut].Index].ID

	end := cut   // the history part ends here, or at the split turn's start
	first := cut // the first message kept
	for first < len(parts)-1 && !isMessage(&parts[first]) {
		first++
	}
	if !startsTurn(&parts[first]) {
		for t := cut - 1; t >= 0; t-- {
			if startsTurn(&parts[t]) {
				end = t
				break
			}
		}
	}
	p.Summarize = make([]events.Message, 0, end)
	for k := range parts[:cut] {
		for _, m := range parts[k].Messages {
			p.Files.note(&m)
			if k < end {
				p.Summarize = append(p.Summarize, m)
			} else {
				p.TurnPrefix = append(p.TurnPrefix, m)
			}
		}
	}
	if len(p.Summarize) == 0 && len(p.TurnPrefix) == 0 {
		return p, ErrNothingToCompact
	}
	return p, nil
}

// cutPoint returns the position in parts of the first entry kept: walking
// back from the newest message until keep tokens are reached, then forward
// to the nearest entry a cut may start at. It returns 0 (keep everything)
// when the whole context is within the budget, and len(parts) never: the
// newest cut-allowed entry is kept at least.
func cutPoint(parts []sessiontree.Part, keep int64) int {
	var acc int64
	start := -1
	for k := len(parts) - 1; k >= 0; k-- {
		if !isMessage(&parts[k]) {
			continue
		}
		acc += estimate(&parts[k])
		if acc >= keep {
			start = k
			break
		}
	}
	if start <= 0 {
		return 0
	}
	for k := start; k < len(parts); k++ {
		if cutAllowed(&parts[k]) {
			return k
		}
	}
	// Only tool results after the budget point: cut at the last entry
	// before it that may start the kept part.
	for k := start - 1; k > 0; k-- {
		if cutAllowed(&parts[k]) {
			return k
		}
	}
	return 0
}
