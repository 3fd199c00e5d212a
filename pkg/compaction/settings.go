package compaction

import "fmt"

// Defaults of [Settings] for a model whose window is large enough.
const (
	DefaultReserveTokens    = 16384
	DefaultKeepRecentTokens = 20000
)

// Settings are the budgets of a compaction, in tokens.
type Settings struct {
	// ReserveTokens is the room kept free in the window: compaction
	// triggers when the context has more than window − reserve tokens. The
	// summary's output is capped at 80% of it.
	ReserveTokens int64
	// KeepRecentTokens is how much of the newest history a compaction keeps
	// verbatim.
	KeepRecentTokens int64
}

// SettingsFor returns the default settings for a model with the given
// context window: the defaults above, each scaled down to a quarter of the
// window when the window is small (so that what a compaction keeps, plus
// its summary, fits well below the threshold). window ≤ 0 = the defaults.
func SettingsFor(window int64) Settings {
	s := Settings{ReserveTokens: DefaultReserveTokens, KeepRecentTokens: DefaultKeepRecentTokens}
	if window <= 0 {
		return s
	}
	q := max(window/4, 1)
	s.ReserveTokens = min(s.ReserveTokens, q)
	s.KeepRecentTokens = min(s.KeepRecentTokens, q)
	return s
}

// FieldError names a setting or argument that is out of range.
type FieldError struct {
	Field   string
	Problem string
}

func (e *FieldError) Error() string { return "compaction: " + e.Field + ": " + e.Problem }

// Validate reports the first setting out of range.
func (s Settings) Validate() error {
	if s.ReserveTokens <= 0 {
		return &FieldError{Field: "reserveTokens", Problem: fmt.Sprintf("must be positive, got %d", s.ReserveTokens)}
	}
	if s.KeepRecentTokens <= 0 {
		return &FieldError{Field: "keepRecentTokens", Problem: fmt.Sprintf("must be positive, got %d", s.KeepRecentTokens)}
	}
	return nil
}

// MaxSummaryTokens is the output cap of a summary call: 80% of the reserve,
// and never more than the model's own limit (modelMax ≤ 0 = no limit known).
func (s Settings) MaxSummaryTokens(modelMax int64) int64 {
	n := s.ReserveTokens * 8 / 10
	if n < 1 {
		n = 1
	}
	if modelMax > 0 && n > modelMax {
		n = modelMax
	}
	return n
}
