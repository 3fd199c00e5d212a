// Package compactor will summarise long session histories for compaction and
// branch summaries, as horizontally scaled workers (DESIGN §1, §5).
// It is not built yet: `cairn compactor` says so and exits 1.
package compactor
